# The library's layers, ground first (docs/architecture.md), one OBJECT target each: chorus_<layer>_objs.
#
# A layer's sources see only the folders of its own layer and the layers below it: their include root is a folder
# of symbolic links to exactly those (build/layer_include/<layer>/), never the source tree itself, so a header of a
# higher layer is "file not found" and an upward include fails to build. scripts/check_layers.py says the same in
# CI without a build. What every layer needs from outside (Threads, Asio, the public headers, CUDA, hwloc) comes
# from the INTERFACE target chorus_deps; libchorus.so and chorus_internals are made of all the layers' objects.

# layer -> the folders its code may include (its own last).
set(CHORUS_LAYERS core reduce device topology transports algorithms comm)
set(chorus_layer_sees_core core)
set(chorus_layer_sees_reduce core reduce)
set(chorus_layer_sees_device core reduce device)
set(chorus_layer_sees_topology core reduce device topology)
set(chorus_layer_sees_transports core reduce device topology transports)
# An algorithm never names a transport or the device runtime (DESIGN.md): it speaks PeerIO and Reducer only.
set(chorus_layer_sees_algorithms core reduce topology algorithms)
set(chorus_layer_sees_comm core reduce device topology transports algorithms src)

# The emulators (emulation/: the software verbs device, the emulated GPU runtime) are a layer of the same kind,
# beside the stack rather than in it: they see the layers they emulate for, and no layer sees them. They are not
# part of libchorus.so (emulation/CMakeLists.txt says where they go).
set(chorus_layer_sees_emulation core reduce device topology transports emulation)

# chorus_add_layer(LAYER BELOW): the OBJECT target chorus_<LAYER>_objs, whose include root holds the folders of
# chorus_layer_sees_<LAYER> and which takes the usage requirements of chorus_<BELOW>_objs ("" for none).
function(chorus_add_layer layer below)
  set(target chorus_${layer}_objs)
  add_library(${target} OBJECT)
  set(root ${PROJECT_BINARY_DIR}/layer_include/${layer})
  file(REMOVE_RECURSE ${root})  # made afresh at every configure: no link survives a change of the lists above
  file(MAKE_DIRECTORY ${root})
  foreach(folder IN LISTS chorus_layer_sees_${layer})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PRIVATE ${root})
  # Usage requirements only: an object library linked to another takes none of its objects.
  target_link_libraries(${target} PUBLIC chorus_deps)
  if(below)
    target_link_libraries(${target} PUBLIC chorus_${below}_objs)
  endif()
  # No unity batches for the library: which files share a batch changed what GCC inlined across them (its per-unit
  # limits) and moved the 2-rank 8-byte shm allreduce by 15% with every regrouping (0.205 vs 0.237-0.241 us for the
  # same code). Tests and tools keep their batches, where the compile time goes. Builds that are not timed batch the
  # library too: sanitizer builds, and CHORUS_UNITY_LIBRARY (scripts/test.sh's). Which files share a unit is
  # cmake/setup_batches.cmake's (setup-path files are grouped in every build).
  if(CHORUS_UNITY_BUILD AND (CHORUS_SANITIZE OR CHORUS_UNITY_LIBRARY))
    set(library_unity ON)
  else()
    set(library_unity OFF)
  endif()
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    UNITY_BUILD ${library_unity})
endfunction()

set(CHORUS_LAYER_TARGETS "")
set(chorus_previous_layer "")
foreach(layer IN LISTS CHORUS_LAYERS)
  chorus_add_layer(${layer} "${chorus_previous_layer}")
  list(APPEND CHORUS_LAYER_TARGETS chorus_${layer}_objs)
  set(chorus_previous_layer ${layer})
endforeach()

# Every layer's objects, for the libraries made of them.
set(CHORUS_LAYER_OBJECTS "")
foreach(target IN LISTS CHORUS_LAYER_TARGETS)
  list(APPEND CHORUS_LAYER_OBJECTS $<TARGET_OBJECTS:${target}>)
endforeach()
