# Authentication: SHA-256, HMAC-SHA256, the channel challenge-response; included from src/CMakeLists.txt.
target_sources(chorus_objs PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/sha256.cc
  ${CMAKE_CURRENT_LIST_DIR}/hmac_sha256.cc
  ${CMAKE_CURRENT_LIST_DIR}/random_bytes.cc
  ${CMAKE_CURRENT_LIST_DIR}/channel_handshake.cc
  ${CMAKE_CURRENT_LIST_DIR}/channel_auth.cc)
