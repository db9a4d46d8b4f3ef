// The pages' placeholders filled: one pass over the page, copying what lies between them.
#include "jetagent/web/pages.h"

namespace jetagent::web {

std::string fillTemplate(std::string_view page,
    std::initializer_list<std::pair<std::string_view, std::string_view>> values)
{
    size_t size = page.size();
    for (const auto& value : values)
        size += value.second.size();
    std::string out;
    out.reserve(size);
    size_t at = 0;
    for (size_t open = page.find("{{"); open != std::string_view::npos;
         open = page.find("{{", at)) {
        const size_t close = page.find("}}", open + 2);
        if (close == std::string_view::npos)
            break;
        const std::string_view name = page.substr(open + 2, close - open - 2);
        const std::string_view* text = nullptr;
        for (const auto& value : values)
            if (value.first == name)
                text = &value.second;
        if (text == nullptr) { // not ours: kept, scanning on after its "{{"
            out.append(page.substr(at, open + 2 - at));
            at = open + 2;
            continue;
        }
        out.append(page.substr(at, open - at));
        out.append(*text);
        at = close + 2;
    }
    out.append(page.substr(at));
    return out;
}

} // namespace jetagent::web
