// The strict YAML document reader shared by the config loader and the board profiles.
#include "jetagent/base/yaml_document.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>
#include <vector>

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

// The offset in `text` of the byte `mark` points at. yaml-cpp skips a UTF-8 byte-order mark and
// counts its positions after it.
size_t textOffset(const std::string& text, const YAML::Mark& mark)
{
    const size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    return static_cast<size_t>(std::max(mark.pos, 0)) + bom;
}

// The events of a text's first pass: where each document starts (the caller stops after three)
// and the first anchor or alias. yaml-cpp 0.7's LoadAll never returns on some texts (a ',' or an
// anchor or tag before one, at the top level: the parser yields an empty document without
// consuming the token, forever); a document that starts where the one before it started is that
// case, and ends the walk.
class FirstPass : public YAML::EventHandler {
public:
    std::vector<YAML::Mark> starts;
    // The first anchor ('&name') or alias ('*name'), in text order; its mark's line is -1 when
    // there is none.
    YAML::Mark anchorOrAlias = YAML::Mark::null_mark();
    bool isAlias = false;

    void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
    void OnDocumentEnd() override { }
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { note(mark, anchor); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override
    {
        if (anchorOrAlias.is_null()) {
            anchorOrAlias = mark;
            isAlias = true;
        }
    }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
        const std::string&) override
    {
        note(mark, anchor);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
        YAML::EmitterStyle::value) override
    {
        note(mark, anchor);
    }
    void OnSequenceEnd() override { }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
        YAML::EmitterStyle::value) override
    {
        note(mark, anchor);
    }
    void OnMapEnd() override { }

private:
    void note(const YAML::Mark& mark, YAML::anchor_t anchor)
    {
        if (anchor != YAML::NullAnchor && anchorOrAlias.is_null())
            anchorOrAlias = mark;
    }
};

// The refusal of an anchor or alias at `mark`, naming it as written ("&defaults", "*defaults")
// and at its own column when it is on the mark's line (a tag may come before an anchor).
Status anchorsRefused(
    const std::string& text, const std::string& name, const YAML::Mark& mark, bool isAlias)
{
    const size_t start = textOffset(text, mark);
    const size_t sigil = text.find(isAlias ? '*' : '&', start);
    std::string written;
    int column = mark.column + 1;
    if (sigil != std::string::npos && sigil < std::min(text.find('\n', start), text.size())) {
        const size_t end = std::min(text.find_first_of(" \t\r\n,[]{}", sigil + 1), text.size());
        if (end - sigil <= 40)
            written = " '" + text.substr(sigil, end - sigil) + "'";
        column += static_cast<int>(sigil - start);
    }
    return Status::invalid(at(name, mark.line + 1, column) + ": YAML " +
        (isAlias ? "alias" : "anchor") + written +
        ": anchors and aliases ('&name', '*name', '<<: *name') are not accepted in jetagent's "
        "files; write the value out where it is used");
}

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
    // First the documents' starts and anchors (at most three documents: one is allowed, a second is
    // refused, a third tells a stuck parser from a real second document), then the one document
    // itself.
    FirstPass documents;
    YAML::Node node;
    try {
        std::istringstream in(text);
        YAML::Parser parser(in);
        while (documents.starts.size() < 3 && parser.HandleNextDocument(documents)) {
            const size_t n = documents.starts.size();
            if (n >= 2 && documents.starts[n - 1].pos == documents.starts[n - 2].pos) {
                const YAML::Mark& mark = documents.starts[n - 1];
                const size_t pos = textOffset(text, mark);
                const std::string token = pos < text.size() ? text.substr(pos, 1) : std::string();
                return yamlSyntaxError(text, name, mark,
                    "unexpected '" + token + "' where a value or a key should start");
            }
        }
        if (documents.starts.empty())
            return YAML::Node();
        // Aliases are refused before the document is built: yaml-cpp shares an aliased node, but
        // every walk of the tree (ours, the readers') visits it once per alias, and aliases
        // nested ten by ten, nine deep (a few hundred bytes) make a billion visits.
        if (!documents.anchorOrAlias.is_null())
            return anchorsRefused(text, name, documents.anchorOrAlias, documents.isAlias);
        if (documents.starts.size() > 1) {
            const int line = documents.starts[1].line + 1;
            return Status::invalid(at(name, line > 0 ? line : 1) +
                ": a second YAML document (after '---' or '...'); the file must hold one");
        }
        node = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        // An alias whose anchor is missing is refused as the alias it is.
        if (e.msg == YAML::ErrorMsg::UNKNOWN_ANCHOR)
            return anchorsRefused(text, name, e.mark, true);
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
