// The shared vocabulary of base/: enum name tables, text splitting, the typed YAML reader.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "jetagent/base/enum_names.h"
#include "jetagent/base/text.h"
#include "jetagent/base/yaml_document.h"
#include "jetagent/base/yaml_reader.h"
#include "jetagent/engines/engine.h"

namespace jetagent {
namespace {

using Strings = std::vector<std::string>;

TEST(EnumNames, EveryRowReadsBothWays)
{
    enum class Colour { Red, Green, Blue };
    constexpr EnumName<Colour> kNames[] = {
        {Colour::Red, "red"}, {Colour::Green, "green"}, {Colour::Blue, "blue"}};
    static_assert(nameOf(kNames, Colour::Green)[0] == 'g', "nameOf works at compile time");
    for (const auto& row : kNames) {
        Colour parsed = Colour::Red;
        EXPECT_TRUE(parseName(kNames, row.name, parsed)) << row.name;
        EXPECT_EQ(parsed, row.value);
        EXPECT_STREQ(nameOf(kNames, row.value), row.name);
    }
    Colour untouched = Colour::Blue;
    EXPECT_FALSE(parseName(kNames, "Red", untouched)); // names are exact, case included
    EXPECT_EQ(untouched, Colour::Blue);
    EXPECT_STREQ(nameOf(kNames, static_cast<Colour>(7)), "?");
    EXPECT_STREQ(nameOf(kNames, static_cast<Colour>(7), "none"), "none");
    EXPECT_EQ(joinNames(kNames), "red, green, blue");
    EXPECT_EQ(joinNames(kNames, "|"), "red|green|blue");
}

// Each table of the config and the engine options names every value of its enum once.
template <typename E, size_t N>
void expectComplete(const EnumName<E> (&table)[N], int count)
{
    ASSERT_EQ(static_cast<int>(N), count);
    for (int i = 0; i < count; ++i) {
        const E value = static_cast<E>(i);
        E parsed {};
        ASSERT_TRUE(parseName(table, nameOf(table, value), parsed)) << i;
        EXPECT_EQ(parsed, value);
    }
}

TEST(EnumNames, TheConfigTablesAreComplete)
{
    expectComplete(kPacingNames, 2);
    expectComplete(kResizeModeNames, 2);
    expectComplete(kColorOrderNames, 2);
    expectComplete(kInterpolationNames, 4);
    expectComplete(kOutputKindNames, 2);
    expectComplete(kActionModeNames, 2);
    expectComplete(kClipLayoutNames, 2);
    expectComplete(kPowerSamplingNames, 3);
    expectComplete(kMarkerModeNames, 2);
    expectComplete(kTriggerModeNames, 2);
    expectComplete(kPrecisionNames, 3);
    expectComplete(kDeviceNames, 4);
    expectComplete(kIoMemoryNames, 3);
    EXPECT_STREQ(precisionName(Precision::Int8), "int8");
    Device device = Device::Cpu;
    EXPECT_TRUE(parseDevice("dla1", &device));
    EXPECT_EQ(device, Device::Dla1);
}

TEST(TextSplit, FieldsKeepEveryEmptyOne)
{
    EXPECT_EQ(splitFields("a,,b", ','), (Strings {"a", "", "b"}));
    EXPECT_EQ(splitFields("", ','), (Strings {""}));
    EXPECT_EQ(splitFields(",", ','), (Strings {"", ""}));
    EXPECT_EQ(splitFields("xnnpack:cpu", ':'), (Strings {"xnnpack", "cpu"}));
    EXPECT_EQ(splitFields(std::string("a\0b\0", 4), '\0'), (Strings {"a", "b", ""}));
}

TEST(TextSplit, LinesAsGetlineReadsThem)
{
    EXPECT_EQ(splitLines(""), Strings {});
    EXPECT_EQ(splitLines("a"), (Strings {"a"}));
    EXPECT_EQ(splitLines("a\n"), (Strings {"a"}));
    EXPECT_EQ(splitLines("a\n\nb"), (Strings {"a", "", "b"}));
    EXPECT_EQ(splitLines("a\r\nb\n\n"), (Strings {"a\r", "b", ""}));
    EXPECT_EQ(trimSpace(" \t x y \r\n"), "x y");
    EXPECT_EQ(trimSpace(" \n "), "");
}

// The typed reader's messages, which the config and the board profiles both give.
TEST(YamlReader, TypedReadsNameFileLineAndKey)
{
    const std::string text = "n: 12\n"
                             "big: 99\n"
                             "f: x\n"
                             "b: maybe\n"
                             "s:\n"
                             "mode: fast\n"
                             "list: [a, {b: c}]\n"
                             "lisst: 3\n";
    auto document = parseYamlDocument(text, "r.yaml");
    ASSERT_TRUE(document) << document.status().message();
    YamlFileReader file("r.yaml");
    YamlMapReader m(file, document.value(), "top");
    int64_t n = 0;
    EXPECT_TRUE(m.integer("n", n, 0, 100));
    EXPECT_EQ(n, 12);
    int64_t big = 5;
    EXPECT_FALSE(m.integer("big", big, 0, 10));
    EXPECT_EQ(big, 5);
    double f = 0;
    EXPECT_FALSE(m.number("f", f, 0, 1));
    bool b = false;
    EXPECT_FALSE(m.boolean("b", b));
    std::string s;
    EXPECT_FALSE(m.string("s", s));
    Pacing pacing = Pacing::Realtime;
    EXPECT_FALSE(m.choice("mode", kPacingNames, pacing));
    Strings list;
    EXPECT_TRUE(m.stringList("list", list));
    EXPECT_EQ(list, Strings {"a"});
    int64_t absent = 0;
    EXPECT_FALSE(m.integer("absent", absent, 0, 1));
    EXPECT_FALSE(m.string("model", s));
    m.finish();
    const std::string unknown = "r.yaml:8:1: top.lisst: unknown key (did you mean 'list'?); known "
                                "here: absent, b, big, f, list, mode, model, n, s";
    EXPECT_EQ(file.errors(),
        (Strings {"r.yaml:2:6: top.big: must be between 0 and 10 (got 99)",
            "r.yaml:3:4: top.f: expected a number, got 'x'",
            "r.yaml:4:4: top.b: expected true or false, got 'maybe'",
            "r.yaml:5: top.s: expected a text value, got nothing",
            "r.yaml:6:7: top.mode: must be one of realtime, none (got 'fast')",
            "r.yaml:7:11: top.list[1]: expected a text value, got a mapping", unknown}));
    EXPECT_EQ(file.lines().at("top.n"), 1);
    EXPECT_EQ(file.lines().at("top.s"), 5);
}

// A number whose 0 has a meaning of its own takes 0 or its range, nothing between.
// A file named where a YAML file belongs (power.board: /etc/passwd) is one long scalar: errors
// quote 40 bytes of it at most, escaped, never the whole.
TEST(YamlReader, MessagesQuoteAShortEscapedExcerptOfAScalar)
{
    EXPECT_EQ(describeYamlNode(YAML::Node("abc")), "'abc'");
    const std::string secret = "root:x:0:0:root:/root:/bin/bash daemon:x:1:1:SECRET-TAIL";
    const std::string d = describeYamlNode(YAML::Node(secret));
    EXPECT_EQ(d, "'" + secret.substr(0, 40) + "...' (" + std::to_string(secret.size()) + " bytes)");
    EXPECT_EQ(d.find("SECRET-TAIL"), std::string::npos);
    EXPECT_EQ(describeYamlNode(YAML::Node(std::string("a\x1b[31mb"))), "'a\\x1b[31mb'");
}

TEST(YamlReader, NumberOrZeroRefusesWhatLiesBetween)
{
    auto document = parseYamlDocument("off: 0\ntiny: 1e-300\nlow: 0.5\nok: 2\nneg: -1\n", "r.yaml");
    ASSERT_TRUE(document) << document.status().message();
    YamlFileReader file("r.yaml");
    YamlMapReader m(file, document.value(), "");
    double v = 7;
    EXPECT_TRUE(m.numberOrZero("off", v, 1, 10, "none"));
    EXPECT_EQ(v, 0.0);
    EXPECT_FALSE(m.numberOrZero("tiny", v, 1, 10, "none"));
    EXPECT_FALSE(m.numberOrZero("low", v, 1, 10, "none"));
    EXPECT_TRUE(m.numberOrZero("ok", v, 1, 10, "none"));
    EXPECT_EQ(v, 2.0);
    EXPECT_FALSE(m.numberOrZero("neg", v, 1, 10, "none"));
    EXPECT_EQ(v, 2.0);
    EXPECT_EQ(file.errors(),
        (Strings {"r.yaml:2:7: tiny: must be 0 (none) or from 1 to 10 (got 1e-300)",
            "r.yaml:3:6: low: must be 0 (none) or from 1 to 10 (got 0.5)",
            "r.yaml:5:6: neg: must be 0 (none) or from 1 to 10 (got -1)"}));
}

// Every file read through parseYamlDocument (configs, board profiles, sweep studies) refuses
// anchors and aliases at the first, naming it; a document without them is read as before.
TEST(YamlDocument, AnchorsAndAliasesAreRefusedAtTheFirst)
{
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"a: &x 1\nb: *x\n", "p.yaml:1:4: YAML anchor '&x'"},
        {"a: 1\nb: [1, *x]\n", "p.yaml:2:8: YAML alias '*x'"}, // an unknown anchor too
        {"- &long-name {k: v}\n", "p.yaml:1:3: YAML anchor '&long-name'"},
        {"a: {<<: *x}\n", "p.yaml:1:9: YAML alias '*x'"},
        {"a: !!map &m {k: v}\n", "p.yaml:1:10: YAML anchor '&m'"},
    };
    for (const auto& [text, expected] : cases) {
        auto document = parseYamlDocument(text, "p.yaml");
        ASSERT_FALSE(document) << text;
        EXPECT_NE(document.status().message().find(expected), std::string::npos)
            << text << "\n"
            << document.status().message();
    }
    // '&' and '*' inside a value are text.
    auto text = parseYamlDocument("a: x&y\nb: '*z'\nc: \"&w\"\n", "p.yaml");
    ASSERT_TRUE(text) << text.status().message();
    EXPECT_EQ(text.value()["a"].Scalar(), "x&y");
    EXPECT_EQ(text.value()["b"].Scalar(), "*z");
    EXPECT_EQ(text.value()["c"].Scalar(), "&w");
}

// yaml-cpp skips a UTF-8 byte-order mark and counts its positions after it; the messages' lines
// and columns are those an editor shows.
TEST(YamlDocument, AByteOrderMarkIsSkipped)
{
    auto document = parseYamlDocument("\xEF\xBB\xBF"
                                      "a: 1\n",
        "p.yaml");
    ASSERT_TRUE(document) << document.status().message();
    EXPECT_EQ(document.value()["a"].Scalar(), "1");
    auto twice = parseYamlDocument("\xEF\xBB\xBF"
                                   "a: 1\na: 2\n",
        "p.yaml");
    ASSERT_FALSE(twice);
    EXPECT_NE(twice.status().message().find("p.yaml:2:1: 'a' appears twice"), std::string::npos)
        << twice.status().message();
    auto comma = parseYamlDocument("\xEF\xBB\xBF ,", "p.yaml");
    ASSERT_FALSE(comma);
    EXPECT_NE(comma.status().message().find("p.yaml:1:2: YAML syntax error: unexpected ','"),
        std::string::npos)
        << comma.status().message();
}

} // namespace
} // namespace jetagent
