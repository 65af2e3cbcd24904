#include "attn/io/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "attn/error.h"
#include "attn/io/crc32.h"

namespace attn::io {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentralDir = 0x06054b50, kZip64End = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kMax32 = 0xffffffffu;

template <typename T> T le(std::string_view s, size_t at) {
  T v;
  std::memcpy(&v, s.data() + at, sizeof(T));
  return v;
}

template <typename T> void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// Where the central directory is and how many entries it has.
struct Directory {
  uint64_t entries = 0, offset = 0, size = 0;
};

Directory find_directory(std::string_view z, const std::string& path) {
  check(z.size() >= 22, "zip ", path, ": file too short (", z.size(), " bytes) to be a zip archive");
  // The end record is the last 22 bytes plus a comment of at most 65535 bytes.
  size_t lowest = z.size() > 22 + 65535 ? z.size() - 22 - 65535 : 0;
  size_t at = z.size() - 22;
  while (le<uint32_t>(z, at) != kEndOfCentralDir) {
    check(at > lowest, "zip ", path, ": no end-of-central-directory record (not a zip archive?)");
    --at;
  }
  Directory d{le<uint16_t>(z, at + 10), le<uint32_t>(z, at + 16), le<uint32_t>(z, at + 12)};
  bool zip64 = d.entries == 0xffff || d.offset == kMax32 || d.size == kMax32;
  if (zip64 && at >= 20 && le<uint32_t>(z, at - 20) == kZip64Locator) {
    uint64_t rec = le<uint64_t>(z, at - 20 + 8);
    check(rec + 56 <= z.size() && le<uint32_t>(z, rec) == kZip64End, "zip ", path,
          ": bad Zip64 end-of-central-directory record at ", rec);
    d = {le<uint64_t>(z, rec + 32), le<uint64_t>(z, rec + 48), le<uint64_t>(z, rec + 40)};
  }
  check(d.offset <= z.size() && d.size <= z.size() - d.offset, "zip ", path,
        ": central directory [", d.offset, ", +", d.size, ") beyond the end of the file (",
        z.size(), " bytes)");
  return d;
}

struct Member {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

// Replaces 0xffffffff sizes/offset by their values in the Zip64 extra field (id 1).
void apply_zip64_extra(std::string_view extra, Member& m, const std::string& path) {
  for (size_t i = 0; i + 4 <= extra.size();) {
    uint16_t id = le<uint16_t>(extra, i), len = le<uint16_t>(extra, i + 2);
    check(i + 4 + len <= extra.size(), "zip ", path, ": member '", m.name, "': bad extra field");
    if (id == 1) {
      size_t p = i + 4, end = i + 4 + len;
      for (uint64_t* field : {&m.uncompressed, &m.compressed, &m.local_offset}) {
        if (*field != kMax32) continue;
        check(p + 8 <= end, "zip ", path, ": member '", m.name, "': short Zip64 extra field");
        *field = le<uint64_t>(extra, p);
        p += 8;
      }
    }
    i += 4 + len;
  }
}

Member read_central_entry(std::string_view z, size_t& at, const std::string& path) {
  check(at + 46 <= z.size() && le<uint32_t>(z, at) == kCentralHeader, "zip ", path,
        ": bad central directory entry at offset ", at);
  Member m;
  m.flags = le<uint16_t>(z, at + 8);
  m.method = le<uint16_t>(z, at + 10);
  m.crc = le<uint32_t>(z, at + 16);
  m.compressed = le<uint32_t>(z, at + 20);
  m.uncompressed = le<uint32_t>(z, at + 24);
  size_t name_len = le<uint16_t>(z, at + 28), extra_len = le<uint16_t>(z, at + 30);
  size_t comment_len = le<uint16_t>(z, at + 32);
  m.local_offset = le<uint32_t>(z, at + 42);
  check(at + 46 + name_len + extra_len + comment_len <= z.size(), "zip ", path,
        ": central directory entry at ", at, " runs past the end of the file");
  m.name = std::string(z.substr(at + 46, name_len));
  apply_zip64_extra(z.substr(at + 46 + name_len, extra_len), m, path);
  at += 46 + name_len + extra_len + comment_len;
  return m;
}

// The member's compressed bytes: past its local header (whose own sizes may be placeholders).
std::string_view member_data(std::string_view z, const Member& m, const std::string& path) {
  uint64_t at = m.local_offset;
  check(at <= z.size() && z.size() - at >= 30 && le<uint32_t>(z, at) == kLocalHeader, "zip ", path, ": member '",
        m.name, "': bad local header at offset ", at);
  uint64_t start = at + 30 + le<uint16_t>(z, at + 26) + le<uint16_t>(z, at + 28);
  check(start <= z.size() && m.compressed <= z.size() - start, "zip ", path, ": member '", m.name,
        "': data [", start, ", +", m.compressed, ") beyond the end of the file (", z.size(),
        " bytes)");
  return z.substr(start, m.compressed);
}

std::string inflate_raw(std::string_view in, const Member& m, const std::string& path) {
  // Deflate expands at most ~1032:1; a larger claimed size is a damaged directory, and believing
  // it would allocate gigabytes.
  check(m.uncompressed / 1032 <= in.size() + 1, "zip ", path, ": member '", m.name, "' claims ",
        m.uncompressed, " bytes from ", in.size(), " deflated bytes (damaged directory?)");
  std::string out(m.uncompressed, '\0');
  z_stream s{};
  check(inflateInit2(&s, -MAX_WBITS) == Z_OK, "zip ", path, ": zlib inflateInit2 failed");
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  int rc = Z_OK;
  // zlib counts in uInt (32 bits): feed and drain in chunks for members over 4 GiB.
  size_t in_left = in.size(), out_left = out.size();
  while (rc == Z_OK) {
    s.avail_in = static_cast<uInt>(std::min<size_t>(in_left, 1u << 30));
    s.avail_out = static_cast<uInt>(std::min<size_t>(out_left, 1u << 30));
    uInt ai = s.avail_in, ao = s.avail_out;
    rc = inflate(&s, Z_NO_FLUSH);
    in_left -= ai - s.avail_in;
    out_left -= ao - s.avail_out;
    if (rc == Z_OK && ai == s.avail_in && ao == s.avail_out) rc = Z_BUF_ERROR;  // no progress
  }
  inflateEnd(&s);
  check(rc == Z_STREAM_END && out_left == 0, "zip ", path, ": member '", m.name,
        "': deflate data is corrupt or does not inflate to ", m.uncompressed, " bytes (zlib ", rc,
        ", ", s.msg ? s.msg : "", ")");
  return out;
}

}  // namespace

void for_each_zip_member(std::string_view z, const std::string& path,
                         const std::function<void(const std::string&, std::string_view)>& visit) {
  Directory dir = find_directory(z, path);
  size_t at = dir.offset;
  for (uint64_t k = 0; k < dir.entries; ++k) {
    Member m = read_central_entry(z, at, path);
    check((m.flags & 1) == 0, "zip ", path, ": member '", m.name, "' is encrypted");
    std::string_view raw = member_data(z, m, path);
    std::string inflated;
    if (m.method == 8) {
      inflated = inflate_raw(raw, m, path);
      raw = inflated;
    } else {
      check(m.method == 0, "zip ", path, ": member '", m.name, "' uses compression method ",
            m.method, " (only stored 0 and deflate 8 are supported)");
      check(m.compressed == m.uncompressed, "zip ", path, ": stored member '", m.name,
            "' has compressed size ", m.compressed, " != uncompressed size ", m.uncompressed);
    }
    uint32_t crc = crc32_of(raw);
    check(crc == m.crc, "zip ", path, ": member '", m.name, "' fails its CRC-32 check (stored ",
          m.crc, ", computed ", crc, ")");
    visit(m.name, raw);
  }
}

std::string zip_stored(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, central;
  const uint16_t version = 20, dos_time = 0, dos_date = (1 << 5) | 1;  // 1980-01-01 00:00
  for (const auto& [name, bytes] : members) {
    check(out.size() <= kMax32 && bytes.size() < kMax32 && name.size() <= 0xffff,
          "zip: archive too large for a non-Zip64 zip at member '", name, "' (", bytes.size(),
          " bytes at offset ", out.size(), ")");
    uint32_t crc = crc32_of(bytes), size = static_cast<uint32_t>(bytes.size());
    uint32_t offset = static_cast<uint32_t>(out.size());
    put<uint32_t>(out, kLocalHeader);
    for (uint16_t v : {version, uint16_t(0), uint16_t(0), dos_time, dos_date}) put(out, v);
    for (uint32_t v : {crc, size, size}) put(out, v);
    put<uint16_t>(out, static_cast<uint16_t>(name.size()));
    put<uint16_t>(out, 0);
    out += name;
    out += bytes;

    put<uint32_t>(central, kCentralHeader);
    for (uint16_t v : {version, version, uint16_t(0), uint16_t(0), dos_time, dos_date}) put(central, v);
    for (uint32_t v : {crc, size, size}) put(central, v);
    put<uint16_t>(central, static_cast<uint16_t>(name.size()));
    for (int k = 0; k < 4; ++k) put<uint16_t>(central, 0);  // extra, comment, disk, internal attr
    put<uint32_t>(central, 0);                               // external attributes
    put<uint32_t>(central, offset);
    central += name;
  }
  check(out.size() <= kMax32 && members.size() < 0xffff, "zip: archive too large for a non-Zip64 zip");
  uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  put<uint32_t>(out, kEndOfCentralDir);
  put<uint16_t>(out, 0);  // this disk
  put<uint16_t>(out, 0);  // disk with the directory
  put<uint16_t>(out, static_cast<uint16_t>(members.size()));
  put<uint16_t>(out, static_cast<uint16_t>(members.size()));
  put<uint32_t>(out, static_cast<uint32_t>(central.size()));
  put<uint32_t>(out, cd_offset);
  put<uint16_t>(out, 0);  // comment length
  return out;
}

}  // namespace attn::io
