// The live view's page: web/live's files (compiled in, jetagent/web/pages.h) around the inlined
// Chart.js; every figure on it comes from the JSON endpoints, so the page itself never changes
// during a run.
#include "live/live_page.h"

#include "jetagent/web/pages.h"

namespace jetagent {

std::string livePageHtml(const std::string& chartJs)
{
    return web::fillTemplate(web::livePageHtml(),
        {{"style", web::liveStyleCss()}, {"chart_js", chartJs}, {"script", web::liveScriptJs()}});
}

} // namespace jetagent
