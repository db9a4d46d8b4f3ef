// Program-wide logging set-up: where log lines go and how they look.
#include "output/logging.h"

#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace jetagent {

void setupLogging(const std::string& level)
{
    auto logger = spdlog::stderr_color_mt("jetagent");
    if (isatty(STDERR_FILENO))
        logger->set_pattern("%H:%M:%S.%e %^%-5l%$ [%n] %v");
    else
        logger->set_pattern("%l [%n] %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(level));
}

} // namespace jetagent
