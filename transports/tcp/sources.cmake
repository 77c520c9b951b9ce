# TCP transport files beyond those transports/CMakeLists.txt lists (the hello codec).
target_sources(chorus_objs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tcp_hello.cc)
