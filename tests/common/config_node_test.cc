#include "common/config_node.h"

#include <catch2/catch.hpp>

#include "common/error.h"
#include "support/error_message.h"

using distlab::ConfigError;
using distlab::ConfigNode;
using distlab::testing::message_of;

namespace {

const char* kDoc =
    "name: demo\n"
    "layers:\n"
    "  - dense: {units: 10}\n"
    "  - dense: {unitz: 3}\n"
    "rate: 0.5\n";

}  // namespace

TEST_CASE("A config node reads checked values with their key paths") {
  const auto root = ConfigNode::load_string(kDoc, "demo.yaml");
  CHECK(root.at("name").as_string() == "demo");
  CHECK(root.at("rate").as_double(0, 1) == 0.5);
  const auto first = root.at("layers")[0];
  CHECK(first.single_key() == "dense");
  CHECK(first.at("dense").at("units").as_int(1, 100) == 10);
  CHECK(first.at("dense").at("units").key() == "layers[0].dense.units");
  CHECK(first.at("dense").at("units").line() == 3);
  CHECK(root.get_int("missing", 7, 0, 10) == 7);
}

TEST_CASE("Config errors name the file, the line and the key") {
  const auto root = ConfigNode::load_string(kDoc, "demo.yaml");

  SECTION("an unknown key suggests the closest allowed one") {
    const auto msg =
        message_of<ConfigError>([&] { root.at("layers")[1].at("dense").allow_only({"units"}); });
    CHECK(msg == "demo.yaml:4: layers[1].dense.unitz: unknown key (did you mean 'units'?)");
  }
  SECTION("a value out of range gives the range") {
    const auto msg = message_of<ConfigError>([&] { root.at("rate").as_double(0, 0.25); });
    CHECK(msg == "demo.yaml:5: rate: must be between 0 and 0.25, got 0.5");
  }
  SECTION("a missing key points at its parent") {
    const auto msg = message_of<ConfigError>([&] { root.at("layers")[1].at("dense").at("units"); });
    CHECK(msg == "demo.yaml:4: layers[1].dense: missing required key 'units'");
  }
  SECTION("a wrong type says what was found") {
    const auto msg = message_of<ConfigError>([&] { root.at("name").as_int(0, 10); });
    CHECK(msg == "demo.yaml:1: name: expected an integer, got 'demo'");
  }
  SECTION("an unknown choice lists or guesses") {
    const auto msg = message_of<ConfigError>([&] {
      root.at("name").as_choice({"demo1", "other"});
    });
    CHECK(msg == "demo.yaml:1: name: unknown value 'demo' (did you mean 'demo1'?)");
  }
}

TEST_CASE("Broken YAML and missing files are config errors") {
  CHECK(message_of<ConfigError>([] {
          ConfigNode::load_string("a: [1, 2\n", "bad.yaml");
        }).starts_with("bad.yaml:"));
  CHECK(message_of<ConfigError>([] { ConfigNode::load_string("", "empty.yaml"); }) ==
        "empty.yaml:1: the document is empty");
  CHECK(message_of<ConfigError>([] { ConfigNode::load_file("/nonexistent/x.yaml"); }) ==
        "/nonexistent/x.yaml: cannot open the file");
}

TEST_CASE("Repeated keys and keys that are not names are refused") {
  const auto twice = ConfigNode::load_string("a: 1\nb: 2\na: 3\n", "twice.yaml");
  CHECK(message_of<ConfigError>([&] {
          twice.allow_only({"a", "b"});
        }) == "twice.yaml:3: a: key given twice");
  const auto odd = ConfigNode::load_string("[1, 2]: x\n", "odd.yaml");
  CHECK(message_of<ConfigError>([&] {
          odd.allow_only({"a"});
        }).find("a key must be a plain name") != std::string::npos);
}

TEST_CASE("A key with nothing after it reads as an empty mapping") {
  const auto root = ConfigNode::load_string("flatten:\n", "empty.yaml");
  const auto options = root.at("flatten");
  CHECK(options.is_null());
  CHECK_NOTHROW(options.allow_only({"name"}));
  CHECK(options.get_string("name", "fallback") == "fallback");
}
