#include "attn/io/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/mapped_file.h"

namespace attn::io {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes little-endian");

namespace {

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// A cursor over the header's Python dict literal. It understands exactly what numpy writes:
// quoted strings, True/False, integers and tuples of integers.
struct DictReader {
  std::string_view s;
  size_t i = 0;
  const std::string& where;

  void skip_space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  }
  bool accept(char c) {
    skip_space();
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  }
  void expect(char c) {
    check(accept(c), where, ": .npy header: expected '", c, "' at column ", i, " of ", s);
  }
  std::string string_literal() {
    skip_space();
    check(i < s.size() && (s[i] == '\'' || s[i] == '"'), where,
          ": .npy header: expected a quoted string at column ", i, " of ", s);
    char q = s[i++];
    size_t end = s.find(q, i);
    check(end != std::string_view::npos, where, ": .npy header: unterminated string in ", s);
    std::string out(s.substr(i, end - i));
    i = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    if (s.substr(i, 4) == "True") return i += 4, true;
    if (s.substr(i, 5) == "False") return i += 5, false;
    fail(where, ": .npy header: expected True or False at column ", i, " of ", s);
  }
  int64_t integer() {
    skip_space();
    size_t start = i;
    int64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      check(v < std::numeric_limits<int64_t>::max() / 10, where, ": .npy header: dimension too large in ", s);
      v = v * 10 + (s[i++] - '0');
    }
    check(i > start, where, ": .npy header: expected a non-negative integer at column ", start, " of ", s);
    if (i < s.size() && s[i] == 'L') ++i;  // Python 2 longs
    return v;
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    while (!accept(')')) {
      shape.push_back(integer());
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }
};

NpyHeader parse_header_dict(std::string_view text, const std::string& where) {
  DictReader r{text, 0, where};
  NpyHeader h;
  bool have_descr = false, have_shape = false;
  r.expect('{');
  while (!r.accept('}')) {
    std::string key = r.string_literal();
    r.expect(':');
    if (key == "descr") {
      r.skip_space();
      check(r.i < text.size() && text[r.i] != '[', where,
            ": structured (record) dtypes are not supported: ", text);
      h.descr = r.string_literal();
      have_descr = true;
    } else if (key == "fortran_order") {
      h.fortran_order = r.boolean();
    } else if (key == "shape") {
      h.shape = r.tuple();
      have_shape = true;
    } else {
      fail(where, ": .npy header: unexpected key '", key, "' in ", text);
    }
    if (!r.accept(',')) {
      r.expect('}');
      break;
    }
  }
  check(have_descr && have_shape, where, ": .npy header lacks 'descr' or 'shape': ", text);
  return h;
}

// Storage dtype and on-disk item size for a numpy descr.
DType dtype_for_descr(const std::string& descr, size_t& item_size, const std::string& where) {
  if (descr == "<f4") return item_size = 4, DType::f32;
  if (descr == "<f8") return item_size = 8, DType::f32;
  if (descr == "<i4") return item_size = 4, DType::i32;
  if (descr == "<i8") return item_size = 8, DType::i64;
  if (descr == "|b1") return item_size = 1, DType::i32;
  if (descr == "|i1") return item_size = 1, DType::i8;
  fail(where, ": unsupported dtype '", descr, "' (attn reads '<f4', '<f8', '<i4', '<i8', '|b1', '|i1')");
}

// Fills `t` (dense, t.dtype()) from raw items of the given descr.
void convert_items(const char* src, const std::string& descr, Tensor& t) {
  int64_t n = t.numel();
  if (n == 0) return;
  if (descr == "<f8") {
    float* out = t.data<float>();
    for (int64_t k = 0; k < n; ++k) {
      double d;
      std::memcpy(&d, src + 8 * k, 8);
      out[k] = static_cast<float>(d);
    }
  } else if (descr == "|b1") {
    int32_t* out = t.data<int32_t>();
    for (int64_t k = 0; k < n; ++k) out[k] = src[k] != 0;
  } else {
    std::memcpy(t.raw_data(), src, t.nbytes());
  }
}

// Fortran order stores the transpose: read as the reversed shape, then reverse the axes.
Tensor from_fortran_order(const Tensor& reversed) {
  Tensor t = reversed;
  for (int64_t a = 0, b = t.dim() - 1; a < b; ++a, --b) t = t.transpose(a, b);
  return t.clone();
}

const char* descr_for(DType t) {
  switch (t) {
    case DType::f32: return "<f4";
    case DType::bf16: return "<f4";  // widened on write
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::i8: return "|i1";
  }
  return "?";
}

Tensor bf16_to_f32(const Tensor& t) {
  Tensor src = t.contiguous();
  Tensor out = Tensor::empty(t.shape(), DType::f32);
  const uint16_t* s = src.data<uint16_t>();
  float* d = out.data<float>();
  for (int64_t k = 0, n = t.numel(); k < n; ++k) {
    uint32_t bits = static_cast<uint32_t>(s[k]) << 16;
    std::memcpy(d + k, &bits, 4);
  }
  return out;
}

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& where) {
  check(bytes.size() >= 10 && bytes.substr(0, 6) == "\x93NUMPY", where,
        ": not a .npy image (bad magic or shorter than 10 bytes: ", bytes.size(), ")");
  int major = static_cast<unsigned char>(bytes[6]);
  check(major >= 1 && major <= 3, where, ": unsupported .npy version ", major, ".",
        static_cast<int>(static_cast<unsigned char>(bytes[7])));
  size_t len_bytes = major == 1 ? 2 : 4;
  check(bytes.size() >= 8 + len_bytes, where, ": .npy image truncated in its header length");
  uint32_t header_len = 0;
  std::memcpy(&header_len, bytes.data() + 8, len_bytes);
  size_t data_start = 8 + len_bytes + header_len;
  check(data_start <= bytes.size(), where, ": .npy header length ", header_len,
        " goes beyond the end (", bytes.size(), " bytes)");
  NpyHeader h = parse_header_dict(bytes.substr(8 + len_bytes, header_len), where);

  size_t item = 0;
  DType dtype = dtype_for_descr(h.descr, item, where);
  Shape shape = h.shape;
  if (h.fortran_order) shape.assign(h.shape.rbegin(), h.shape.rend());
  // The element count, multiplied out only while its bytes fit 63 bits: a shape of huge
  // dimensions is refused without overflowing, an empty one too (its strides are the products of
  // the other dimensions).
  const size_t have = bytes.size() - data_start;
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / item;
  uint64_t extent = 1;
  bool huge = false;
  for (size_t i = 0; i < shape.size() && !huge; ++i) {
    const uint64_t d = std::max<uint64_t>(static_cast<uint64_t>(shape[i]), 1);
    huge = extent > limit / d;
    extent *= huge ? 1 : d;
  }
  const bool empty = std::find(shape.begin(), shape.end(), int64_t{0}) != shape.end();
  const uint64_t numel = empty ? 0 : extent;
  check(!huge && numel * item == have, where, ": shape ", shape_str(h.shape), " of '", h.descr, "' needs ",
        huge ? std::string("more than 2^63") : std::to_string(numel * item), " bytes of data, the image has ", have);
  Tensor t = Tensor::empty(shape, dtype);
  convert_items(bytes.data() + data_start, h.descr, t);
  return h.fortran_order ? from_fortran_order(t) : t;
}

std::string npy_bytes(const Tensor& t) {
  check(t.defined(), "npy: cannot write an undefined tensor");
  Tensor dense = t.dtype() == DType::bf16 ? bf16_to_f32(t) : t.contiguous();
  // Python tuple syntax: "()", "(3,)", "(2, 3)".
  std::string shape = "(";
  for (int64_t k = 0; k < t.dim(); ++k) {
    if (k > 0) shape += ", ";
    shape += std::to_string(t.shape()[k]);
  }
  shape += t.dim() == 1 ? ",)" : ")";
  std::string dict = std::string("{'descr': '") + descr_for(t.dtype()) +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and a final '\n' so the data starts at a multiple of 64 (numpy's layout).
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  check(dict.size() <= 65535, "npy: header of shape ", shape_str(t.shape()), " too long");

  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  uint16_t len = static_cast<uint16_t>(dict.size());
  out.append(reinterpret_cast<const char*>(&len), 2);
  out += dict;
  if (dense.nbytes() > 0) out.append(static_cast<const char*>(dense.raw_data()), dense.nbytes());
  return out;
}

Tensor load_npy(const std::string& path) {
  std::shared_ptr<MappedFile> file = map_file(path);
  return parse_npy(file->bytes(), path);
}

void save_npy(const std::string& path, const Tensor& t) { write_file_atomic(path, npy_bytes(t)); }

}  // namespace attn::io
