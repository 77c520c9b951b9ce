# The library's setup-path sources, compiled in unity groups: files that run while a communicator is made, split,
# shrunk or torn down, or when a call fails, and never while a call moves bytes. Each re-parses the same heavy
# headers (Asio, nlohmann-json, the engine's); compiled together they parse them once. The quick start's build is
# the one this shortens (scripts/quickstart.sh; perf/results/ci.md has the figures).
#
# Files on a call's path stay alone: a bigger unit changes what GCC inlines in it (its per-unit limits), and moved
# the 2-rank 8-byte shm allreduce by 15% when the whole library was batched (cmake/layers.cmake). A file that
# joins a group here must not hold code a call runs.
#
# Builds that batch the whole library (sanitizers, CHORUS_UNITY_LIBRARY: cmake/layers.cmake) keep these groups and
# put each layer's other C++ files in groups of 8, so that the test build compiles the very groups the quick start
# does. CHORUS_UNITY_BUILD=OFF compiles every file alone.

# group -> layer and files, relative to the source root.
set(chorus_setup_group_bootstrap core
  core/bootstrap/job_file.cc core/bootstrap/launch_spec.cc core/bootstrap/peer_card.cc core/bootstrap/store_client.cc
  core/bootstrap/store_protocol.cc core/bootstrap/store_server.cc core/bootstrap/store_session.cc
  core/bootstrap/pmix_exchange.cc)
set(chorus_setup_group_core_settings core
  core/comm_config.cc core/params.cc core/name_list.cc core/host_port.cc core/byte_text.cc
  core/emulation_library.cc core/cuda_error.cc core/security/channel_auth.cc core/security/channel_handshake.cc
  core/security/crypto_error.cc core/security/sha256.cc core/security/hmac_sha256.cc core/deadline_wait.cc)
set(chorus_setup_group_topology_detection topology
  topology/topology_json.cc topology/topology_detector.cc topology/host_topology.cc
  topology/host_topology_check.cc topology/cpu_list.cc topology/local_host.cc topology/network_interfaces.cc
  topology/host_identity.cc)
set(chorus_setup_group_topology_model topology
  topology/link_model.cc topology/host_blocks.cc topology/rank_placement.cc topology/topology_description.cc)
set(chorus_setup_group_tcp_setup transports
  transports/transport_registry.cc transports/tcp/tcp_transport.cc transports/tcp/tcp_rail_probe.cc
  transports/tcp/tcp_hello.cc)
set(chorus_setup_group_shm_ib_setup transports
  transports/shm/shm_transport.cc transports/shm/shm_handshake.cc transports/shm/cma_calibration.cc
  transports/ib/ib_ports.cc transports/ib/hca_filter.cc transports/complete_transfers.cc)
set(chorus_setup_group_comm_lifecycle comm
  src/comm/shrink_agreement.cc src/comm/mismatch_report.cc src/comm/link_probe.cc src/comm/clock_offset.cc
  src/api/api_errors.cc src/api/c_api_elastic.cc src/api/config_arguments.cc src/comm/peer_liveness.cc
  src/comm/call_under_way.cc)
set(chorus_setup_group_comm_setup comm
  src/comm/peer_connections.cc src/comm/comm_setup.cc src/comm/comm_family.cc src/comm/autotune_file.cc
  src/comm/call_failures.cc src/comm/wait_policy.cc)
set(chorus_setup_groups bootstrap core_settings topology_detection topology_model tcp_setup shm_ib_setup
  comm_lifecycle comm_setup)

if(CHORUS_UNITY_BUILD)
  set(grouped "")
  foreach(group IN LISTS chorus_setup_groups)
    list(POP_FRONT chorus_setup_group_${group} layer)
    set(files "")
    foreach(file IN LISTS chorus_setup_group_${group})
      list(APPEND files ${PROJECT_SOURCE_DIR}/${file})
    endforeach()
    list(APPEND grouped ${files})
    set_source_files_properties(${files} TARGET_DIRECTORY chorus_${layer}_objs PROPERTIES UNITY_GROUP ${group})
  endforeach()
  foreach(layer IN LISTS CHORUS_LAYERS)
    set(target chorus_${layer}_objs)
    get_target_property(batch_everything ${target} UNITY_BUILD)
    if(batch_everything)
      # The rest of the layer's C++ files, 8 to a group, in the order the layer lists them.
      get_target_property(sources ${target} SOURCES)
      set(index 0)
      foreach(source IN LISTS sources)
        if(source MATCHES "\\.cc$" AND NOT source IN_LIST grouped)
          math(EXPR batch "${index} / 8")
          set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP ${layer}_${batch})
          math(EXPR index "${index} + 1")
        endif()
      endforeach()
    endif()
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  endforeach()
endif()
