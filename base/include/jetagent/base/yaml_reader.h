// Typed reading of a parsed YAML document (parseYamlDocument) with errors that name the file, line,
// column and key: the one reader the agent's config and the board profiles share.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "jetagent/base/enum_names.h"

namespace jetagent {

// A node as messages name it: "a mapping", "a list", "nothing" or the scalar quoted ("'x'"), at
// most 40 bytes of it with control characters escaped ("'root:x:0:0:...' (1262 bytes)").
std::string describeYamlNode(const YAML::Node& node);

// One scalar as a type; false, `out` untouched, when `node` is no such scalar.
bool yamlInteger(const YAML::Node& node, int64_t& out); // decimal, within int64
bool yamlNumber(const YAML::Node& node, double& out); // finite
bool yamlBoolean(const YAML::Node& node, bool& out); // true/false and YAML's other spellings

// The reading of one file: its name, every error found so far (all of them, so that one pass
// names every mistake) and the line each key was read at. Errors read
// "file:line:col: key: message".
class YamlFileReader {
public:
    explicit YamlFileReader(std::string file) : file_(std::move(file)) { }

    const std::string& file() const { return file_; }

    // An error at `at`'s position (the file alone where the node has none).
    void error(const YAML::Node& at, const std::string& key, const std::string& message);
    // The same at a line alone (0: none), for a value whose own position means nothing
    // (yamlValueLine).
    void errorAtLine(int line, const std::string& key, const std::string& message);
    // An error already written in full.
    void addError(std::string message) { errors_.push_back(std::move(message)); }

    const std::vector<std::string>& errors() const { return errors_; }
    std::string joinedErrors() const; // one a line

    // Records that `key` (a full path: "tasks[0].model") is at `line` (0: unknown, not recorded).
    void remember(const std::string& key, int line);
    const std::map<std::string, int>& lines() const { return lines_; }

    // Readers of a node that is not a mapping's value (a list item, a mapping's key): each
    // reports a node of another type under `key` and returns false.
    // A text value; `allowEmpty` takes "" (a quoted empty string) as a value of its own.
    bool text(
        const YAML::Node& node, const std::string& key, std::string& out, bool allowEmpty = false);
    bool integer(const YAML::Node& node, const std::string& key, int64_t& out);
    // True when `node` is a mapping or absent; reports anything else.
    bool expectMap(const YAML::Node& node, const std::string& key);

private:
    std::string file_;
    std::vector<std::string> errors_;
    std::map<std::string, int> lines_;
};

// One mapping being read: each key the reader knows is taken once (take() or a typed read below,
// absent or not), and finish() reports every other key of the mapping as unknown, naming the
// known key nearest to it. The typed reads return true when the key is there and its value was
// stored in `out`; a value of the wrong type or out of range is reported and leaves `out` as it
// was.
class YamlMapReader {
public:
    // `path` prefixes the keys in messages ("source" gives "source.fps"; "" for the top level).
    // YAML::Node is a handle: copying it shares the parsed document.
    YamlMapReader(YamlFileReader& file, const YAML::Node& node, std::string path)
        : file_(file), node_(node), path_(std::move(path))
    {
    }

    std::string keyPath(const std::string& key) const
    {
        return path_.empty() ? key : path_ + "." + key;
    }

    // The value under `key`, or an undefined node when absent.
    YAML::Node take(const std::string& key);

    // An error about `key` at `at` (for a null value, at the key's own line).
    void error(const std::string& key, const YAML::Node& at, const std::string& message);

    bool integer(const std::string& key, int64_t& out, int64_t lo, int64_t hi);
    template <typename T>
    bool integerAs(const std::string& key, T& out, int64_t lo, int64_t hi)
    {
        int64_t v = 0;
        if (!integer(key, v, lo, hi))
            return false;
        out = static_cast<T>(v);
        return true;
    }
    // A number from `lo` (or above it, when !loInclusive) to `hi`.
    bool number(const std::string& key, double& out, double lo, double hi, bool loInclusive = true);
    // A number that is 0 (what `zeroMeans` says: "no limit", "the source's own") or from `lo`
    // (> 0) to `hi`. A positive value below `lo` is refused, not taken: a rate of 1e-300 per
    // second or an interval of 1e-300 s would become an infinite period or 0 ns, that is the
    // meaning of 0 or none at all.
    bool numberOrZero(
        const std::string& key, double& out, double lo, double hi, const std::string& zeroMeans);
    // An integer that is 0 (what `zeroMeans` says: "automatic") or from `lo` (> 0) to `hi`.
    bool integerOrZero(
        const std::string& key, int64_t& out, int64_t lo, int64_t hi, const std::string& zeroMeans);
    bool boolean(const std::string& key, bool& out);
    // A text value; `allowEmpty` takes "" (a quoted empty string) as a value of its own.
    bool string(const std::string& key, std::string& out, bool allowEmpty = false);
    // A text value that must be one of `choices`.
    bool choice(const std::string& key, const std::vector<std::string>& choices, std::string& out);
    // A text value that must name a row of `table`.
    template <typename E, size_t N>
    bool choice(const std::string& key, const EnumName<E> (&table)[N], E& out)
    {
        std::string v;
        if (!choiceText(key, joinNames(table), v))
            return false;
        if (parseName(table, v, out))
            return true;
        notAChoice(key, joinNames(table), v);
        return false;
    }
    // A list of non-empty text values, appended to `out`.
    bool stringList(const std::string& key, std::vector<std::string>& out);

    // Reports the keys not taken.
    void finish();

private:
    // The text of a choice; anything else (nothing, a list) is an error naming the choices.
    bool choiceText(const std::string& key, const std::string& choices, std::string& out);
    void notAChoice(const std::string& key, const std::string& choices, const std::string& value);
    bool fail(const std::string& key, const YAML::Node& at, const std::string& message)
    {
        error(key, at, message);
        return false;
    }
    // The value at `key` as a number in `v`, its node in `n`; false when absent or not a number
    // (that one reported).
    bool takeNumber(const std::string& key, YAML::Node& n, double& v);
    bool takeInteger(const std::string& key, YAML::Node& n, int64_t& v);

    YamlFileReader& file_;
    YAML::Node node_;
    std::string path_;
    std::set<std::string> known_;
    std::map<std::string, int> keyLines_; // the line each taken key's value is reported at
};

// Reads the mapping at `node`, whose keys are under `path` ("" for the top level): an error when
// it is something else; otherwise (absent included) `fields(m)` with the reader of its keys, then
// the report of those `fields` did not take.
template <typename Fields>
void readMapping(
    YamlFileReader& file, const YAML::Node& node, const std::string& path, Fields&& fields)
{
    if (!file.expectMap(node, path))
        return;
    YamlMapReader m(file, node, path);
    fields(m);
    m.finish();
}

} // namespace jetagent
