#include "attn/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/crc32.h"
#include "attn/io/json.h"
#include "attn/io/mapped_file.h"

namespace attn::io {

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes little-endian");

namespace {

using json = nlohmann::json;

// The __metadata__ key of the data buffer's CRC-32, 8 lowercase hex digits.
constexpr const char* kChecksumKey = "crc32";

std::string hex8(uint32_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s(8, '0');
  for (int i = 7; i >= 0; --i, v >>= 4) s[i] = digits[v & 15];
  return s;
}

// A file that carries a checksum must match it: a flipped bit in the weights would otherwise load
// as a slightly different model. Files without one (older attn, other writers) are not checked.
void verify_checksum(const std::string& path, const std::map<std::string, std::string>& metadata,
                     std::string_view data) {
  auto it = metadata.find(kChecksumKey);
  if (it == metadata.end()) return;
  const std::string& stored = it->second;
  check(stored.size() == 8 && stored.find_first_not_of("0123456789abcdef") == std::string::npos, "safetensors ",
        path, ": __metadata__ ", kChecksumKey, " '", stored, "' is not 8 lowercase hex digits");
  std::string actual = hex8(crc32_of(data));
  check(actual == stored, "safetensors ", path, ": the data does not match its checksum (", kChecksumKey,
        " stored ", stored, ", computed ", actual, "): the file is corrupt");
}

// One tensor's header entry, checked against the data buffer.
struct Entry {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

bool dtype_from_name(const std::string& s, DType& out) {
  for (DType t : {DType::f32, DType::bf16, DType::i32, DType::i64, DType::i8}) {
    if (s == dtype_name(t)) {
      out = t;
      return true;
    }
  }
  return false;
}

uint64_t read_u64_le(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

Entry parse_entry(const std::string& path, const std::string& name, const json& j,
                  uint64_t data_size) {
  const std::string where = "safetensors " + path + ": tensor '" + name + "'";
  check(j.is_object(), where, ": header entry is not an object: ", j.dump());
  check(j.contains("dtype") && j["dtype"].is_string(), where, ": missing string \"dtype\"");
  check(j.contains("shape") && j["shape"].is_array(), where, ": missing array \"shape\"");
  check(j.contains("data_offsets") && j["data_offsets"].is_array() &&
            j["data_offsets"].size() == 2,
        where, ": missing \"data_offsets\" [begin, end]");
  Entry e;
  e.name = name;
  std::string dt = j["dtype"].get<std::string>();
  check(dtype_from_name(dt, e.dtype), where, ": unsupported dtype ", dt,
        " (attn reads F32, BF16, I32, I64, I8)");
  uint64_t numel = 1;
  for (const json& d : j["shape"]) {
    check(d.is_number_unsigned(), where, ": shape ", j["shape"].dump(),
          " has a non-integer or negative dimension");
    uint64_t v = d.get<uint64_t>();
    check(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
              (v == 0 || numel <= data_size / v),
          where, ": shape ", j["shape"].dump(), " is larger than the data buffer (", data_size,
          " bytes)");
    numel *= v;
    e.shape.push_back(static_cast<int64_t>(v));
  }
  for (const json& o : j["data_offsets"])
    check(o.is_number_unsigned(), where, ": data_offsets ", j["data_offsets"].dump(),
          " are not non-negative integers");
  e.begin = j["data_offsets"][0].get<uint64_t>();
  e.end = j["data_offsets"][1].get<uint64_t>();
  check(e.begin <= e.end && e.end <= data_size, where, ": data_offsets [", e.begin, ", ", e.end,
        "] out of range for a data buffer of ", data_size, " bytes");
  uint64_t want = numel * dtype_size(e.dtype);
  if (!(e.end - e.begin == want))
    fail(where, ": data_offsets [", e.begin, ", ", e.end, "] hold ",
         e.end - e.begin, " bytes but shape ", shape_str(e.shape), " of ", dt, " needs ", want);
  return e;
}

// The tensors must tile [0, data_size) exactly: sorted by offset, each starts where the last ended.
void check_coverage(const std::string& path, std::vector<Entry> entries, uint64_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t pos = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : entries) {
    check(e.begin >= pos, "safetensors ", path, ": tensor '", e.name, "' [", e.begin, ", ", e.end,
          ") overlaps tensor '", prev ? prev->name : "", "' which ends at ", pos);
    check(e.begin == pos, "safetensors ", path, ": bytes [", pos, ", ", e.begin,
          ") of the data buffer belong to no tensor (gap before tensor '", e.name, "')");
    pos = e.end;
    prev = &e;
  }
  check(pos == data_size, "safetensors ", path, ": bytes [", pos, ", ", data_size,
        ") at the end of the data buffer belong to no tensor");
}

std::map<std::string, std::string> read_metadata(const std::string& path, const json& j) {
  check(j.is_object(), "safetensors ", path, ": __metadata__ is not an object: ", j.dump());
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : j.items()) {
    check(v.is_string(), "safetensors ", path, ": __metadata__ value of '", k,
          "' is not a string: ", v.dump());
    out[k] = v.get<std::string>();
  }
  return out;
}

json parse_header(const std::string& path, const MappedFile& file, uint64_t& header_len) {
  check(file.size >= 8, "safetensors ", path, ": file too short (", file.size,
        " bytes) to hold the 8-byte header length");
  header_len = read_u64_le(file.data);
  check(header_len <= file.size - 8, "safetensors ", path, ": header length ", header_len,
        " goes beyond the end of the file (", file.size, " bytes)");
  json header = parse_json(std::string_view(file.data + 8, header_len), "safetensors " + path + ": header");
  check(header.is_object(), "safetensors ", path, ": header is not a JSON object");
  return header;
}

// A tensor over the mapping; copied only if the mapping's address is not aligned for the dtype.
Tensor borrow_tensor(const std::shared_ptr<MappedFile>& file, const Entry& e, uint64_t data_start) {
  char* p = file->data + data_start + e.begin;
  if (reinterpret_cast<uintptr_t>(p) % dtype_size(e.dtype) == 0)
    return Tensor::wrap(p, e.shape, e.dtype, file);
  Tensor t = Tensor::empty(e.shape, e.dtype);
  std::memcpy(t.raw_data(), p, e.end - e.begin);
  return t;
}

// The tensors of the mapped file `path`, borrowing the mapping.
std::map<std::string, Tensor> tensors_of(const std::shared_ptr<MappedFile>& file, const std::string& path,
                                         std::map<std::string, std::string>* metadata) {
  uint64_t header_len = 0;
  json header = parse_header(path, *file, header_len);
  uint64_t data_start = 8 + header_len, data_size = file->size - data_start;

  std::vector<Entry> entries;
  std::map<std::string, std::string> meta;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      meta = read_metadata(path, value);
    } else {
      entries.push_back(parse_entry(path, name, value, data_size));
    }
  }
  check_coverage(path, entries, data_size);
  verify_checksum(path, meta, std::string_view(file->data + data_start, data_size));
  meta.erase(kChecksumKey);  // a property of this file, checked; a copy written gets its own
  if (metadata) *metadata = std::move(meta);

  std::map<std::string, Tensor> out;
  for (const Entry& e : entries) out[e.name] = borrow_tensor(file, e, data_start);
  return out;
}

}  // namespace

std::map<std::string, Tensor> load_safetensors(const std::string& path,
                                               std::map<std::string, std::string>* metadata) {
  return tensors_of(map_file(path), path, metadata);
}

std::map<std::string, Tensor> load_safetensors_copied(const std::string& path) {
  std::shared_ptr<MappedFile> file = map_file(path);
  std::map<std::string, Tensor> out = tensors_of(file, path, nullptr);
  for (auto& [name, t] : out) {
    if (!t.storage() || t.storage()->owned()) continue;  // copied already (an unaligned address), or empty
    const std::string_view bytes(static_cast<const char*>(t.raw_data()), static_cast<size_t>(t.nbytes()));
    t = t.clone();
    file->release(bytes);
  }
  return out;
}

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  check(!metadata.count(kChecksumKey), "save_safetensors ", path, ": __metadata__ key '", kChecksumKey,
        "' is reserved (attn writes the data's checksum there)");
  json header = json::object();
  uint64_t offset = 0;
  uint32_t crc = 0;
  std::vector<Tensor> dense;  // in name order, as written
  for (const auto& [name, t] : tensors) {
    check(name != "__metadata__", "save_safetensors ", path,
          ": a tensor may not be named __metadata__");
    check(t.defined(), "save_safetensors ", path, ": tensor '", name, "' is undefined");
    header[name] = {{"dtype", dtype_name(t.dtype())},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
    dense.push_back(t.contiguous());
    if (dense.back().nbytes() > 0)
      crc = crc32_of({static_cast<const char*>(dense.back().raw_data()), static_cast<size_t>(dense.back().nbytes())},
                     crc);
  }
  json meta = metadata;
  meta[kChecksumKey] = hex8(crc);
  header["__metadata__"] = meta;

  std::string text = header.dump();
  // Pad with spaces so that 8 + N is a multiple of 64 (hence of 8, as the format asks).
  text.append((64 - (8 + text.size()) % 64) % 64, ' ');
  uint64_t n = text.size();

  std::string bytes;
  bytes.reserve(8 + n + offset);
  bytes.append(reinterpret_cast<const char*>(&n), 8);
  bytes += text;
  for (const Tensor& t : dense)
    if (t.nbytes() > 0) bytes.append(static_cast<const char*>(t.raw_data()), t.nbytes());
  write_file_atomic(path, bytes);
}

}  // namespace attn::io
