#include "attn/io/ct2_model_bin.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/kernels/bf16.h"

namespace attn::io {

static_assert(std::endian::native == std::endian::little, "model.bin I/O assumes little-endian");

namespace {

// The bytes of model.bin, read front to back; running out names the file and what was being read.
struct Reader {
  const std::string& bytes;
  const std::string& path;
  size_t pos = 0;

  std::string_view take(size_t n, const std::string& what) {
    check(n <= bytes.size() - pos, path, ": ends inside ", what, " (at byte ", pos, " of ", bytes.size(),
          "; a truncated model.bin?)");
    std::string_view out(bytes.data() + pos, n);
    pos += n;
    return out;
  }
  template <class T>
  T number(const std::string& what) {
    T v;
    std::memcpy(&v, take(sizeof(T), what).data(), sizeof(T));
    return v;
  }
  std::string text(const std::string& what) {
    const uint16_t n = number<uint16_t>(what);
    check(n >= 1, path, ": ", what, " has length 0 (a string's length counts its final NUL)");
    std::string_view s = take(n, what);
    check(s.back() == '\0', path, ": ", what, " does not end with NUL");
    return std::string(s.substr(0, n - 1));
  }
};

void put_text(std::string& out, const std::string& s) {
  check(s.size() + 1 <= 0xffff, "model.bin: the name \"", s.substr(0, 80), "...\" is too long");
  const uint16_t n = static_cast<uint16_t>(s.size() + 1);
  out.append(reinterpret_cast<const char*>(&n), 2);
  out.append(s);
  out.push_back('\0');
}
template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// IEEE binary16 -> float32 (normal, subnormal, infinite and NaN values alike).
float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 31, mant = h & 1023;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? std::nanf("") : INFINITY;
  else v = std::ldexp(static_cast<float>(mant | 1024), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

// Item sizes before binary version 4 (model.cc's get_dtype_from_item_size).
Ct2DType dtype_of_item_size(uint8_t size, const std::string& path, const std::string& name) {
  switch (size) {
    case 4: return Ct2DType::f32;
    case 2: return Ct2DType::i16;
    case 1: return Ct2DType::i8;
  }
  fail(path, ": variable \"", name, "\" has item size ", int{size}, " (model.bin version < 4 knows 1, 2 and 4)");
}

}  // namespace

const char* ct2_dtype_name(Ct2DType t) {
  switch (t) {
    case Ct2DType::f32: return "float32";
    case Ct2DType::i8: return "int8";
    case Ct2DType::i16: return "int16";
    case Ct2DType::i32: return "int32";
    case Ct2DType::f16: return "float16";
    case Ct2DType::bf16: return "bfloat16";
  }
  return "?";
}

size_t ct2_dtype_size(Ct2DType t) {
  switch (t) {
    case Ct2DType::i8: return 1;
    case Ct2DType::i16: case Ct2DType::f16: case Ct2DType::bf16: return 2;
    case Ct2DType::f32: case Ct2DType::i32: return 4;
  }
  return 0;
}

const Ct2Variable* Ct2ModelBin::find(const std::string& name) const {
  auto it = variables.find(name);
  if (it != variables.end()) return &it->second;
  auto a = aliases.find(name);
  if (a != aliases.end()) {
    it = variables.find(a->second);
    return it == variables.end() ? nullptr : &it->second;
  }
  // CTranslate2 aliases "<alias>_scale" to "<variable>_scale" (model.cc)
  const std::string suffix = "_scale";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    a = aliases.find(name.substr(0, name.size() - suffix.size()));
    if (a != aliases.end()) {
      it = variables.find(a->second + suffix);
      return it == variables.end() ? nullptr : &it->second;
    }
  }
  return nullptr;
}

Ct2ModelBin read_ct2_model_bin(const std::string& path) {
  const std::string bytes = read_file(path);
  Reader r{bytes, path};
  Ct2ModelBin m;
  m.source = path;
  m.binary_version = r.number<uint32_t>("the binary version");
  check(m.binary_version >= 2 && m.binary_version <= 6, path, ": binary version ", m.binary_version,
        " (attn reads CTranslate2's model.bin versions 2 to 6)");
  m.spec = r.text("the spec name");
  m.spec_revision = r.number<uint32_t>("the spec revision");
  const uint32_t count = r.number<uint32_t>("the number of variables");
  for (uint32_t i = 0; i < count; ++i) {
    const std::string what = "variable " + std::to_string(i) + " of " + std::to_string(count);
    std::string name = r.text("the name of " + what);
    Ct2Variable v;
    const uint8_t rank = r.number<uint8_t>("the rank of \"" + name + "\"");
    int64_t numel = 1;
    for (uint8_t d = 0; d < rank; ++d) {
      v.shape.push_back(r.number<uint32_t>("the shape of \"" + name + "\""));
      numel *= v.shape.back();
      check(numel <= (int64_t{1} << 40), path, ": variable \"", name, "\" has an implausible shape");
    }
    uint64_t nbytes;
    if (m.binary_version >= 4) {
      const uint8_t id = r.number<uint8_t>("the dtype of \"" + name + "\"");
      check(id <= 5, path, ": variable \"", name, "\" has dtype id ", int{id}, " (0 to 5 are float32, int8, int16, ",
            "int32, float16, bfloat16)");
      v.dtype = static_cast<Ct2DType>(id);
      nbytes = r.number<uint32_t>("the size of \"" + name + "\"");
    } else {
      v.dtype = dtype_of_item_size(r.number<uint8_t>("the item size of \"" + name + "\""), path, name);
      nbytes = uint64_t{r.number<uint32_t>("the size of \"" + name + "\"")} * ct2_dtype_size(v.dtype);
    }
    check(nbytes == static_cast<uint64_t>(numel) * ct2_dtype_size(v.dtype), path, ": variable \"", name, "\" holds ",
          nbytes, " bytes, but its shape ", shape_str(v.shape), " of ", ct2_dtype_name(v.dtype), " needs ",
          numel * static_cast<int64_t>(ct2_dtype_size(v.dtype)));
    v.bytes = std::string(r.take(nbytes, "the data of \"" + name + "\""));
    check(m.variables.emplace(std::move(name), std::move(v)).second, path, ": a variable's name appears twice");
  }
  if (m.binary_version >= 3) {
    const uint32_t aliases = r.number<uint32_t>("the number of aliases");
    for (uint32_t i = 0; i < aliases; ++i) {
      std::string alias = r.text("an alias's name");
      std::string target = r.text("the variable of alias \"" + alias + "\"");
      check(m.variables.count(target), path, ": alias \"", alias, "\" names \"", target, "\", which is not a variable");
      m.aliases[alias] = target;
    }
  }
  check(r.pos == bytes.size(), path, ": ", bytes.size() - r.pos, " bytes after the last alias");
  return m;
}

void write_ct2_model_bin(const std::string& path, const Ct2ModelBin& m) {
  std::string out;
  put<uint32_t>(out, 6);
  put_text(out, m.spec);
  put<uint32_t>(out, m.spec_revision);
  put<uint32_t>(out, static_cast<uint32_t>(m.variables.size()));
  for (const auto& [name, v] : m.variables) {
    put_text(out, name);
    put<uint8_t>(out, static_cast<uint8_t>(v.shape.size()));
    for (int64_t d : v.shape) put<uint32_t>(out, static_cast<uint32_t>(d));
    put<uint8_t>(out, static_cast<uint8_t>(v.dtype));
    check(v.bytes.size() == static_cast<size_t>(shape_numel(v.shape)) * ct2_dtype_size(v.dtype), path,
          ": variable \"", name, "\" has ", v.bytes.size(), " bytes for its shape ", shape_str(v.shape));
    put<uint32_t>(out, static_cast<uint32_t>(v.bytes.size()));
    out.append(v.bytes);
  }
  put<uint32_t>(out, static_cast<uint32_t>(m.aliases.size()));
  for (const auto& [alias, target] : m.aliases) {
    put_text(out, alias);
    put_text(out, target);
  }
  write_file_atomic(path, out);
}

Tensor ct2_to_float(const Ct2Variable& v) {
  Tensor t = Tensor::empty(v.shape);
  float* dst = t.data<float>();
  const int64_t n = t.numel();
  const char* src = v.bytes.data();
  auto each = [&](auto type_tag, auto convert) {
    using T = decltype(type_tag);
    for (int64_t i = 0; i < n; ++i) {
      T x;
      std::memcpy(&x, src + i * sizeof(T), sizeof(T));
      dst[i] = convert(x);
    }
  };
  switch (v.dtype) {
    case Ct2DType::f32: std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(n)); break;
    case Ct2DType::i8: each(int8_t{}, [](int8_t x) { return static_cast<float>(x); }); break;
    case Ct2DType::i16: each(int16_t{}, [](int16_t x) { return static_cast<float>(x); }); break;
    case Ct2DType::i32: each(int32_t{}, [](int32_t x) { return static_cast<float>(x); }); break;
    case Ct2DType::f16: each(uint16_t{}, half_to_float); break;
    case Ct2DType::bf16: each(uint16_t{}, bf16_to_float); break;
  }
  return t;
}

Ct2Variable ct2_from_float(const Tensor& t) {
  const Tensor c = t.contiguous();
  Ct2Variable v;
  v.shape = c.shape();
  v.bytes.assign(reinterpret_cast<const char*>(c.data<float>()), sizeof(float) * static_cast<size_t>(c.numel()));
  return v;
}

Ct2Variable ct2_scalar(double value, Ct2DType dtype) {
  Ct2Variable v;
  v.dtype = dtype;
  auto bytes_of = [&](auto x) { v.bytes.assign(reinterpret_cast<const char*>(&x), sizeof(x)); };
  switch (dtype) {
    case Ct2DType::f32: bytes_of(static_cast<float>(value)); break;
    case Ct2DType::i8: bytes_of(static_cast<int8_t>(value)); break;
    case Ct2DType::i16: bytes_of(static_cast<int16_t>(value)); break;
    case Ct2DType::i32: bytes_of(static_cast<int32_t>(value)); break;
    case Ct2DType::f16: case Ct2DType::bf16: fail("model.bin: attn writes no float16 or bfloat16 scalars");
  }
  return v;
}

double ct2_scalar_value(const Ct2Variable& v, const std::string& name, const std::string& source) {
  check(shape_numel(v.shape) == 1, source, ": \"", name, "\" has shape ", shape_str(v.shape), ", not a scalar");
  return ct2_to_float(v).data<float>()[0];
}

}  // namespace attn::io
