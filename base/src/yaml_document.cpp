// The strict YAML document reader shared by the config loader and the board profiles.
#include "jetagent/base/yaml_document.h"

#include <sstream>
#include <unordered_set>

#include <yaml-cpp/eventhandler.h>

namespace jetagent {

namespace {

std::string at(const std::string& name, int line, int column = 0)
{
    std::string where = name + ":" + std::to_string(line);
    if (column > 0)
        where += ":" + std::to_string(column);
    return where;
}

// The first line, up to `lastLine` (1-based, 0 for all), whose indentation holds a tab; 0 when
// none. A block sequence's "- " is part of the indentation ("-<tab>name: x" is tab-indented too).
int firstTabIndentedLine(const std::string& text, int lastLine)
{
    int line = 1;
    bool atIndent = true;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            if (lastLine > 0 && line >= lastLine)
                break;
            ++line;
            atIndent = true;
        } else if (atIndent && c == '\t') {
            return line;
        } else if (atIndent && c == '-' && i + 1 < text.size() &&
            (text[i + 1] == ' ' || text[i + 1] == '\t')) {
            continue; // a sequence entry's dash: its indentation goes on
        } else if (c != ' ') {
            atIndent = false;
        }
    }
    return 0;
}

// Walks every mapping of the tree and refuses the first key that a mapping repeats.
Status checkDuplicateKeys(const YAML::Node& node, const std::string& name, int depth = 0)
{
    // Configs nest a few levels; a document nested deeper than this is no config (and recursing
    // without end on a hostile file must not exhaust the stack).
    constexpr int kMaxDepth = 64;
    if (depth > kMaxDepth)
        return Status::invalid(at(name, node.Mark().line + 1) + ": nested more than " +
            std::to_string(kMaxDepth) + " levels deep");
    if (node.IsMap()) {
        std::unordered_set<std::string> seen;
        for (const auto& entry : node) {
            if (entry.first.IsScalar() && !seen.insert(entry.first.Scalar()).second)
                return Status::invalid(
                    at(name, entry.first.Mark().line + 1, entry.first.Mark().column + 1) + ": '" +
                    entry.first.Scalar() +
                    "' appears twice in the same mapping (the second would be ignored); keep one");
            if (Status s = checkDuplicateKeys(entry.second, name, depth + 1); !s)
                return s;
        }
    } else if (node.IsSequence()) {
        for (const auto& item : node)
            if (Status s = checkDuplicateKeys(item, name, depth + 1); !s)
                return s;
    }
    return Status();
}

// Where each document of a text starts (the caller stops after three). yaml-cpp 0.7's LoadAll never
// returns on some texts (a ',' or an anchor or tag before one, at the top level: the parser yields
// an empty document without consuming the token, forever); a document that starts where the one
// before it started is that case, and ends the walk.
class DocumentStarts : public YAML::EventHandler {
public:
    std::vector<YAML::Mark> starts;
    void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
    void OnDocumentEnd() override { }
    void OnNull(const YAML::Mark&, YAML::anchor_t) override { }
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override { }
    void OnScalar(
        const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override
    {
    }
    void OnSequenceStart(
        const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override
    {
    }
    void OnSequenceEnd() override { }
    void OnMapStart(
        const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override
    {
    }
    void OnMapEnd() override { }
};

Status yamlSyntaxError(const std::string& text, const std::string& name, const YAML::Mark& mark,
    const std::string& what)
{
    const int line = mark.line + 1;
    if (const int tab = firstTabIndentedLine(text, line); tab > 0)
        return Status::invalid(at(name, tab) +
            ": YAML syntax error: a tab in the indentation (YAML indents with spaces only)");
    return Status::invalid(at(name, line, mark.column + 1) + ": YAML syntax error: " + what);
}

} // namespace

Expected<YAML::Node> parseYamlDocument(const std::string& text, const std::string& name)
{
    // First the documents' starts (at most three: one is allowed, a second is refused, a third
    // tells a stuck parser from a real second document), then the one document itself.
    DocumentStarts documents;
    YAML::Node node;
    try {
        std::istringstream in(text);
        YAML::Parser parser(in);
        while (documents.starts.size() < 3 && parser.HandleNextDocument(documents)) {
            const size_t n = documents.starts.size();
            if (n >= 2 && documents.starts[n - 1].pos == documents.starts[n - 2].pos) {
                const YAML::Mark& mark = documents.starts[n - 1];
                const size_t pos = static_cast<size_t>(mark.pos);
                const std::string token = pos < text.size() ? text.substr(pos, 1) : std::string();
                return yamlSyntaxError(text, name, mark,
                    "unexpected '" + token + "' where a value or a key should start");
            }
        }
        if (documents.starts.empty())
            return YAML::Node();
        if (documents.starts.size() > 1) {
            const int line = documents.starts[1].line + 1;
            return Status::invalid(at(name, line > 0 ? line : 1) +
                ": a second YAML document (after '---' or '...'); the file must hold one");
        }
        node = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        return yamlSyntaxError(text, name, e.mark, e.msg);
    }
    if (Status s = checkDuplicateKeys(node, name); !s)
        return s;
    return node;
}

int yamlValueLine(const YAML::Node& key, const YAML::Node& value)
{
    const YAML::Mark mark = value.IsNull() || !value.IsDefined() ? key.Mark() : value.Mark();
    return mark.line >= 0 ? mark.line + 1 : 0;
}

} // namespace jetagent
