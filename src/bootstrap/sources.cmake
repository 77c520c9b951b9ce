# The rendezvous store (server, client, wire format); included from src/CMakeLists.txt.
target_sources(chorus_objs PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/store_protocol.cc
  ${CMAKE_CURRENT_LIST_DIR}/store_server.cc
  ${CMAKE_CURRENT_LIST_DIR}/store_client.cc)
