#include "nn/data/civil_time.h"

#include <charconv>

namespace distlab::nn {

int64_t days_from_civil(int year, int month, int day) {
  // Shift the year to start in March, so the leap day is the year's last.
  const int64_t y = static_cast<int64_t>(year) - (month <= 2 ? 1 : 0);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                             // [0, 399]
  const int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                     // [0, 146096]
  return era * 146097 + doe - 719468;
}

CivilTime civil_from_days(int64_t days) {
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  CivilTime t;
  t.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  t.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  t.year = static_cast<int>(yoe + era * 400 + (t.month <= 2 ? 1 : 0));
  return t;
}

int weekday_from_days(int64_t days) {
  // 1970-01-01 was a Thursday (4); keep the remainder non-negative.
  return static_cast<int>(((days % 7) + 7 + 4) % 7);
}

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

CivilTime civil_from_epoch_seconds(int64_t seconds) {
  int64_t days = seconds / 86400;
  int64_t rest = seconds % 86400;
  if (rest < 0) {
    rest += 86400;
    days -= 1;
  }
  CivilTime t = civil_from_days(days);
  t.hour = static_cast<int>(rest / 3600);
  t.minute = static_cast<int>(rest % 3600 / 60);
  t.second = static_cast<int>(rest % 60);
  return t;
}

namespace {

// A small cursor over the text: each reader consumes on success only.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  bool done() const { return pos_ == s_.size(); }
  bool literal(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }
  bool one_of(std::string_view chars) {
    if (done() || chars.find(s_[pos_]) == std::string_view::npos) return false;
    ++pos_;
    return true;
  }
  // Exactly `min_digits` to `max_digits` decimal digits.
  bool number(int min_digits, int max_digits, int& value) {
    value = 0;
    int count = 0;
    while (!done() && count < max_digits && s_[pos_] >= '0' && s_[pos_] <= '9') {
      value = value * 10 + (s_[pos_++] - '0');
      ++count;
    }
    return count >= min_digits;
  }
  void skip_fraction() {
    if (!literal(".")) return;
    while (!done() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

bool valid(const CivilTime& t) {
  return t.month >= 1 && t.month <= 12 && t.day >= 1 && t.day <= days_in_month(t.year, t.month) &&
         t.hour >= 0 && t.hour <= 23 && t.minute >= 0 && t.minute <= 59 && t.second >= 0 &&
         t.second <= 60;
}

// HH:MM[:SS[.fff]]
bool read_clock(Cursor& c, CivilTime& t) {
  if (!c.number(1, 2, t.hour) || !c.literal(":") || !c.number(2, 2, t.minute)) return false;
  if (c.literal(":")) {
    if (!c.number(2, 2, t.second)) return false;
    c.skip_fraction();
  }
  return true;
}

// YYYY-MM-DD[ T]HH:MM[:SS[.fff]][ UTC|Z|+00:00]
std::optional<CivilTime> read_iso(std::string_view text) {
  Cursor c(text);
  CivilTime t;
  if (!c.number(4, 4, t.year) || !c.literal("-") || !c.number(1, 2, t.month) || !c.literal("-") ||
      !c.number(1, 2, t.day) || !c.one_of(" T") || !read_clock(c, t)) {
    return std::nullopt;
  }
  // An optional zone designator; all of them say UTC.
  for (std::string_view zone : {" UTC", "Z", "+00:00", " +00:00"}) {
    if (c.literal(zone)) break;
  }
  if (!c.done()) return std::nullopt;
  return t;
}

// MM/DD/YYYY HH:MM[:SS] AM|PM
std::optional<CivilTime> read_us(std::string_view text) {
  Cursor c(text);
  CivilTime t;
  if (!c.number(1, 2, t.month) || !c.literal("/") || !c.number(1, 2, t.day) || !c.literal("/") ||
      !c.number(4, 4, t.year) || !c.literal(" ") || !read_clock(c, t) || !c.literal(" ")) {
    return std::nullopt;
  }
  const bool pm = c.literal("PM") || c.literal("pm");
  if (!pm && !(c.literal("AM") || c.literal("am"))) return std::nullopt;
  if (!c.done() || t.hour < 1 || t.hour > 12) return std::nullopt;
  // 12 AM is midnight, 12 PM is noon.
  t.hour = t.hour % 12 + (pm ? 12 : 0);
  return t;
}

std::optional<CivilTime> read_epoch(std::string_view text) {
  int64_t seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  // Years 0000-9999 only, so that the calendar fields cannot overflow.
  constexpr int64_t kLimit = 253402300799;  // 9999-12-31 23:59:59
  if (seconds < -62167219200 || seconds > kLimit) return std::nullopt;
  return civil_from_epoch_seconds(seconds);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<CivilTime> parse_timestamp(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  std::optional<CivilTime> t;
  if (text.find('/') != std::string_view::npos) {
    t = read_us(text);
  } else if (text.find(':') != std::string_view::npos) {
    t = read_iso(text);
  } else {
    t = read_epoch(text);
  }
  if (t && !valid(*t)) return std::nullopt;
  return t;
}

}  // namespace distlab::nn
