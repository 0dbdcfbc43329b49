# Stands in for a test whose inputs are missing: fails with MESSAGE.
#   cmake -DMESSAGE=... -P fail.cmake
message(FATAL_ERROR "${MESSAGE}")
