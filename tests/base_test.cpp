// The shared vocabulary of base/: enum name tables, text splitting, the typed YAML reader.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config.h"
#include "jetagent/base/enum_names.h"
#include "jetagent/base/text_split.h"
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

} // namespace
} // namespace jetagent
