// Typed reading of a parsed YAML document, shared by the config loader and the board profiles.
#include "jetagent/base/yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "jetagent/base/yaml_document.h"

namespace jetagent {

namespace {

size_t editDistance(const std::string& a, const std::string& b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

// A text value as both readers take it: a non-empty scalar, or with `allowEmpty` also a quoted "".
bool isText(const YAML::Node& node, bool allowEmpty)
{
    const bool quotedEmpty = allowEmpty && node.IsScalar() && node.Tag() == "!";
    return node.IsScalar() && (!node.Scalar().empty() || quotedEmpty);
}

} // namespace

std::string describeYamlNode(const YAML::Node& node)
{
    if (node.IsMap())
        return "a mapping";
    if (node.IsSequence())
        return "a list";
    if (node.IsNull())
        return "nothing";
    // Quoted up to 40 bytes, control characters escaped: a file named where a YAML file belongs
    // (power.board: /etc/passwd) is one long scalar, and an error must not print it.
    constexpr size_t kQuoted = 40;
    const std::string& text = node.Scalar();
    std::string quoted;
    for (size_t i = 0; i < text.size() && i < kQuoted; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7f) {
            static const char kHex[] = "0123456789abcdef";
            quoted += "\\x";
            quoted += kHex[c >> 4];
            quoted += kHex[c & 15];
        } else {
            quoted += static_cast<char>(c);
        }
    }
    if (text.size() > kQuoted)
        return "'" + quoted + "...' (" + std::to_string(text.size()) + " bytes)";
    return "'" + quoted + "'";
}

bool yamlInteger(const YAML::Node& node, int64_t& out)
{
    if (!node.IsScalar() || node.Scalar().empty())
        return false;
    const std::string& s = node.Scalar();
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return false;
    out = v;
    return true;
}

bool yamlNumber(const YAML::Node& node, double& out)
{
    if (!node.IsScalar() || node.Scalar().empty())
        return false;
    const std::string& s = node.Scalar();
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (*end != '\0' || errno == ERANGE || !std::isfinite(v))
        return false;
    out = v;
    return true;
}

bool yamlBoolean(const YAML::Node& node, bool& out)
{
    bool v = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v))
        return false;
    out = v;
    return true;
}

void YamlFileReader::error(const YAML::Node& at, const std::string& key, const std::string& message)
{
    std::ostringstream out;
    out << file_;
    if (at.IsDefined() && at.Mark().line >= 0)
        out << ':' << at.Mark().line + 1 << ':' << at.Mark().column + 1;
    out << ": " << key << ": " << message;
    errors_.push_back(out.str());
}

void YamlFileReader::errorAtLine(int line, const std::string& key, const std::string& message)
{
    errors_.push_back(file_ + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + key +
        ": " + message);
}

std::string YamlFileReader::joinedErrors() const
{
    std::string all;
    for (const auto& e : errors_)
        all += (all.empty() ? "" : "\n") + e;
    return all;
}

void YamlFileReader::remember(const std::string& key, int line)
{
    if (line > 0)
        lines_[key] = line;
}

bool YamlFileReader::text(
    const YAML::Node& node, const std::string& key, std::string& out, bool allowEmpty)
{
    if (!isText(node, allowEmpty)) {
        error(node, key, "expected a text value, got " + describeYamlNode(node));
        return false;
    }
    out = node.Scalar();
    return true;
}

bool YamlFileReader::integer(const YAML::Node& node, const std::string& key, int64_t& out)
{
    if (yamlInteger(node, out))
        return true;
    error(node, key, "expected an integer, got " + describeYamlNode(node));
    return false;
}

bool YamlFileReader::expectMap(const YAML::Node& node, const std::string& key)
{
    if (!node.IsDefined() || node.IsMap())
        return true;
    error(node, key, "expected a mapping of keys, got " + describeYamlNode(node));
    return false;
}

YAML::Node YamlMapReader::take(const std::string& key)
{
    known_.insert(key);
    if (!node_.IsMap())
        return YAML::Node(YAML::NodeType::Undefined);
    for (const auto& entry : node_)
        if (entry.first.IsScalar() && entry.first.Scalar() == key) {
            keyLines_[key] = yamlValueLine(entry.first, entry.second);
            file_.remember(keyPath(key), keyLines_[key]);
            return entry.second;
        }
    return YAML::Node(YAML::NodeType::Undefined);
}

void YamlMapReader::error(const std::string& key, const YAML::Node& at, const std::string& message)
{
    // An empty value ("key:" and nothing) has the position of the next token, lines later.
    const auto line = keyLines_.find(key);
    if (at.IsDefined() && at.IsNull() && line != keyLines_.end())
        file_.errorAtLine(line->second, keyPath(key), message);
    else
        file_.error(at, keyPath(key), message);
}

bool YamlMapReader::takeInteger(const std::string& key, YAML::Node& n, int64_t& v)
{
    n = take(key);
    if (!n.IsDefined())
        return false;
    if (!yamlInteger(n, v))
        return fail(key, n, "expected an integer, got " + describeYamlNode(n));
    return true;
}

bool YamlMapReader::integer(const std::string& key, int64_t& out, int64_t lo, int64_t hi)
{
    YAML::Node n;
    int64_t v = 0;
    if (!takeInteger(key, n, v))
        return false;
    if (v < lo || v > hi)
        return fail(key, n,
            "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " +
                n.Scalar() + ")");
    out = v;
    return true;
}

bool YamlMapReader::integerOrZero(
    const std::string& key, int64_t& out, int64_t lo, int64_t hi, const std::string& zeroMeans)
{
    YAML::Node n;
    int64_t v = 0;
    if (!takeInteger(key, n, v))
        return false;
    if (v != 0 && (v < lo || v > hi))
        return fail(key, n,
            "must be 0 (" + zeroMeans + ") or from " + std::to_string(lo) + " to " +
                std::to_string(hi) + " (got " + n.Scalar() + ")");
    out = v;
    return true;
}

bool YamlMapReader::takeNumber(const std::string& key, YAML::Node& n, double& v)
{
    n = take(key);
    if (!n.IsDefined())
        return false;
    if (!yamlNumber(n, v))
        return fail(key, n, "expected a number, got " + describeYamlNode(n));
    return true;
}

bool YamlMapReader::number(
    const std::string& key, double& out, double lo, double hi, bool loInclusive)
{
    YAML::Node n;
    double v = 0.0;
    if (!takeNumber(key, n, v))
        return false;
    if (!(loInclusive ? v >= lo : v > lo) || v > hi) {
        std::ostringstream range;
        range << "must be " << (loInclusive ? "at least " : "greater than ") << lo
              << " and at most " << hi << " (got " << n.Scalar() << ")";
        return fail(key, n, range.str());
    }
    out = v;
    return true;
}

bool YamlMapReader::numberOrZero(
    const std::string& key, double& out, double lo, double hi, const std::string& zeroMeans)
{
    YAML::Node n;
    double v = 0.0;
    if (!takeNumber(key, n, v))
        return false;
    if (v != 0.0 && !(v >= lo && v <= hi)) {
        std::ostringstream range;
        range << "must be 0 (" << zeroMeans << ") or from " << lo << " to " << hi << " (got "
              << n.Scalar() << ")";
        return fail(key, n, range.str());
    }
    out = v;
    return true;
}

bool YamlMapReader::boolean(const std::string& key, bool& out)
{
    const YAML::Node n = take(key);
    if (!n.IsDefined())
        return false;
    if (!yamlBoolean(n, out))
        return fail(key, n, "expected true or false, got " + describeYamlNode(n));
    return true;
}

bool YamlMapReader::string(const std::string& key, std::string& out, bool allowEmpty)
{
    const YAML::Node n = take(key);
    if (!n.IsDefined())
        return false;
    if (!isText(n, allowEmpty))
        return fail(key, n, "expected a text value, got " + describeYamlNode(n));
    out = n.Scalar();
    return true;
}

bool YamlMapReader::choice(
    const std::string& key, const std::vector<std::string>& choices, std::string& out)
{
    std::string list;
    for (const auto& c : choices)
        list += (list.empty() ? "" : ", ") + c;
    std::string v;
    if (!choiceText(key, list, v))
        return false;
    if (std::find(choices.begin(), choices.end(), v) != choices.end()) {
        out = v;
        return true;
    }
    notAChoice(key, list, v);
    return false;
}

bool YamlMapReader::choiceText(const std::string& key, const std::string& choices, std::string& out)
{
    const YAML::Node n = take(key);
    if (!n.IsDefined())
        return false;
    if (!isText(n, false))
        return fail(key, n, "expected one of " + choices + ", got " + describeYamlNode(n));
    out = n.Scalar();
    return true;
}

void YamlMapReader::notAChoice(
    const std::string& key, const std::string& choices, const std::string& value)
{
    error(key, take(key), "must be one of " + choices + " (got '" + value + "')");
}

bool YamlMapReader::stringList(const std::string& key, std::vector<std::string>& out)
{
    const YAML::Node n = take(key);
    if (!n.IsDefined())
        return false;
    if (!n.IsSequence())
        return fail(key, n, "expected a list of text values, got " + describeYamlNode(n));
    for (size_t i = 0; i < n.size(); ++i) {
        std::string value;
        if (file_.text(n[i], keyPath(key) + "[" + std::to_string(i) + "]", value))
            out.push_back(value);
    }
    return true;
}

void YamlMapReader::finish()
{
    if (!node_.IsMap())
        return;
    for (const auto& entry : node_) {
        const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
        if (known_.count(key))
            continue;
        std::string hint;
        size_t best = 3;
        for (const auto& k : known_) {
            const size_t d = editDistance(key, k);
            if (d < best) {
                best = d;
                hint = k;
            }
        }
        std::string known;
        for (const auto& k : known_)
            known += (known.empty() ? "" : ", ") + k;
        file_.error(entry.first, keyPath(key),
            "unknown key" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                "; known here: " + known);
    }
}

} // namespace jetagent
