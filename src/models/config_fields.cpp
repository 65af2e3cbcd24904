#include "config_fields.h"

#include <unistd.h>

#include <cmath>

namespace attn::config_fields {

int64_t read_int(const nlohmann::json& v, const std::string& key, const std::string& source, int64_t lo, int64_t hi) {
  check(v.is_number_integer(), source, ": key '", key, "' must be an integer, got ", v.dump());
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    check(u <= static_cast<uint64_t>(hi), source, ": key '", key, "' must be in [", lo, ", ", hi, "], got ", u);
    return static_cast<int64_t>(u);
  }
  int64_t x = v.get<int64_t>();
  check(x >= lo && x <= hi, source, ": key '", key, "' must be in [", lo, ", ", hi, "], got ", x);
  return x;
}

double read_number(const nlohmann::json& v, const std::string& key, const std::string& source, double lo, double hi,
                   bool hi_open) {
  check(v.is_number(), source, ": key '", key, "' must be a number, got ", v.dump());
  double x = v.get<double>();
  check(std::isfinite(x) && x >= lo && (hi_open ? x < hi : x <= hi), source, ": key '", key, "' must be in [", lo,
        ", ", hi, hi_open ? ")" : "]", ", got ", v.dump());
  return x;
}

bool read_bool(const nlohmann::json& v, const std::string& key, const std::string& source) {
  check(v.is_boolean(), source, ": key '", key, "' must be true or false, got ", v.dump());
  return v.get<bool>();
}

std::string read_string(const nlohmann::json& v, const std::string& key, const std::string& source) {
  check(v.is_string(), source, ": key '", key, "' must be a string, got ", v.dump());
  return v.get<std::string>();
}

void check_size(int64_t value, const char* what, int64_t lo, int64_t hi) {
  check(value >= lo && value <= hi, "config: ", what, " must be in [", lo, ", ", hi, "], got ", value);
}

void check_fits_in_memory(double parameters, const char* family) {
  const double bytes = parameters * sizeof(float);
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  check(memory <= 0 || bytes <= memory, "config: this ", family, " has ", parameters / 1e6,
        "M parameters (", bytes / (1 << 30), " GiB in fp32), more than this machine's memory (",
        memory / (1 << 30), " GiB)");
}

}  // namespace attn::config_fields
