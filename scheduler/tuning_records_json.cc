#include "scheduler/tuning_records_json.h"

#include <cstdio>
#include <cstdlib>
#include <istream>
#include <map>
#include <ostream>

#include "ir/diagnostic.h"

namespace tlmc::scheduler {
namespace {

constexpr const char* kFormat = "tlmc-tuning-records";
constexpr int kVersion = 1;

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The shortest text that reads back as exactly `v`.
std::string number(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// A JSON value of a flat object: a string or a number (kept as its text).
struct Value {
  bool is_string;
  std::string text;
};

// Reads one line holding a flat JSON object of string and number values.
class LineParser {
 public:
  LineParser(const std::string& line, const std::string& file, int line_no)
      : s_(line), file_(file), line_(line_no) {}

  std::map<std::string, Value> object() {
    std::map<std::string, Value> out;
    expect('{');
    if (peek() == '}') {
      ++i_;
      return finish(out);
    }
    for (;;) {
      if (peek() != '"') fail("expected a quoted field name");
      const std::string key = string();
      expect(':');
      const char c = peek();
      if (c == '"') {
        out[key] = Value{true, string()};
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        const size_t start = i_;
        while (i_ < s_.size() &&
               std::string_view("+-.eE0123456789").find(s_[i_]) != std::string_view::npos)
          ++i_;
        out[key] = Value{false, s_.substr(start, i_ - start)};
      } else {
        fail("expected a string or a number for field '" + key + "'");
      }
      const char sep = peek();
      ++i_;
      if (sep == '}') return finish(out);
      if (sep != ',') fail("expected ',' or '}'");
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Diagnostic({file_, line_, static_cast<int>(i_) + 1}, what);
  }

 private:
  std::map<std::string, Value> finish(std::map<std::string, Value>& out) {
    if (peek() != '\0') fail("unexpected text after the object");
    return out;
  }
  char peek() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  void utf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  uint32_t hex4() {
    if (i_ + 4 > s_.size()) fail("a \\u escape needs four hex digits");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k, ++i_) {
      const char c = s_[i_];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) fail("a \\u escape needs four hex digits");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      const char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) break;
      const char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xd800 && cp < 0xdc00 && s_.compare(i_, 2, "\\u") == 0) {
            i_ += 2;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4() - 0xdc00);
          }
          utf8(cp, out);
          break;
        }
        default:
          --i_;
          fail(std::string("unknown escape \\") + e);
      }
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }

  const std::string& s_;
  std::string file_;
  int line_;
  size_t i_ = 0;
};

}  // namespace

// "spread" is written for confirmed records only: an unconfirmed one reads as it did before
// records kept a spread, and an older tlmc ignores the field.
void export_records(std::ostream& out, const std::vector<TuningRecord>& records) {
  out << "{\"format\": " << quoted(kFormat) << ", \"version\": " << kVersion << "}\n";
  for (const TuningRecord& r : records)
    out << "{\"workload_key\": " << quoted(r.workload_key) << ", \"target\": " << quoted(r.target)
        << ", \"schedule\": " << quoted(r.schedule)
        << ", \"status\": " << quoted(std::string(measure_status_name(r.status)))
        << ", \"seconds\": " << number(r.seconds) << ", \"reason\": " << quoted(r.reason)
        << ", \"measured_at\": " << quoted(r.measured_at)
        << ", \"workload\": " << quoted(r.workload)
        << (r.spread > 0 ? ", \"spread\": " + number(r.spread) : std::string()) << "}\n";
}

std::vector<TuningRecord> import_records(std::istream& in, const std::string& file_name) {
  std::vector<TuningRecord> out;
  std::string line;
  int line_no = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    LineParser p(line, file_name, line_no);
    std::map<std::string, Value> obj = p.object();
    auto field = [&](const std::string& name, bool is_string) -> const std::string& {
      auto it = obj.find(name);
      if (it == obj.end()) p.fail("missing field '" + name + "'");
      if (it->second.is_string != is_string)
        p.fail("field '" + name + "' must be a " + (is_string ? "string" : "number"));
      return it->second.text;
    };
    if (!header) {
      if (!obj.count("format") || field("format", true) != kFormat)
        p.fail(
            std::string("not a tlmc tuning-records file: the first line must be {\"format\": \"") +
            kFormat + "\", \"version\": " + std::to_string(kVersion) + "}");
      if (field("version", false) != std::to_string(kVersion))
        p.fail("tuning records of version " + field("version", false) +
               "; this tlmc reads version " + std::to_string(kVersion));
      header = true;
      continue;
    }
    TuningRecord r;
    r.workload_key = field("workload_key", true);
    r.target = field("target", true);
    r.schedule = field("schedule", true);
    const std::optional<MeasureStatus> status = parse_measure_status(field("status", true));
    if (!status) p.fail("unknown status '" + field("status", true) + "'");
    r.status = *status;
    try {
      size_t used = 0;
      const std::string& sec = field("seconds", false);
      r.seconds = std::stod(sec, &used);
      if (used != sec.size()) throw std::invalid_argument(sec);
    } catch (const std::logic_error&) {
      p.fail("field 'seconds' is not a number");
    }
    if (r.status == MeasureStatus::Ok && !(r.seconds > 0))
      p.fail("a successful record needs seconds > 0");
    r.reason = field("reason", true);
    r.measured_at = field("measured_at", true);
    r.workload = field("workload", true);
    // Optional (files exported before records kept a spread have none): 0, not confirmed.
    if (obj.count("spread")) {
      char* end = nullptr;
      const std::string& text = field("spread", false);
      r.spread = std::strtod(text.c_str(), &end);
      if (*end != '\0' || !(r.spread == 0 || r.spread >= 1))
        p.fail("field 'spread' must be 0 or a number >= 1");
    }
    out.push_back(std::move(r));
  }
  if (!header) throw Diagnostic({file_name}, "empty file: no tuning-records header");
  return out;
}

}  // namespace tlmc::scheduler
