// One YAML document read the strict way every jetagent file is read: one document, no duplicate
// keys, and syntax errors that point at the right line and say what is wrong.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "jetagent/base/status.h"

namespace jetagent {

// Parses `text` (named `name` in messages, "file.yaml:LINE:COL: ...") into its root node. Refused,
// with the line: a YAML syntax error (a tab in the indentation is named as such, since yaml-cpp
// calls it "illegal map value"), a second document after `---`, and a mapping that repeats a key
// (yaml-cpp keeps the first and never checks the second), and any anchor or alias ('&name',
// '*name', so '<<: *name' too): jetagent's files are small enough to write out, and aliases nested
// a few levels deep would make every walk of the tree take exponential time ("billion laughs").
// The first pass that finds them reads the text's events once, before any tree is built. A UTF-8
// byte-order mark at the start is skipped (yaml-cpp does). An empty text gives a null root.
Expected<YAML::Node> parseYamlDocument(const std::string& text, const std::string& name);

// The line (1-based) to report for `value`, the node found under `key` in a mapping: a null value
// ("key:" with nothing after it) carries the position of whatever token follows it, possibly many
// lines further down, so the key's own line is given for it. 0 when unknown.
int yamlValueLine(const YAML::Node& key, const YAML::Node& value);

} // namespace jetagent
