// Forwards to redis_test_server.hpp, the GoogleTest's own server (named as test code).
#pragma once
#include "redis_test_server.hpp"
