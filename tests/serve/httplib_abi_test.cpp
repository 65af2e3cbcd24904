// cpp-httplib is Debian's compiled library: its classes are laid out by the macros it was built
// with (pkg-config's Cflags: -DCPPHTTPLIB_OPENSSL_SUPPORT ...), and every file of attn that
// includes httplib.h must see the same ones. Without them attn's httplib::Client was 8 bytes and
// the library's 16: the library's constructor wrote its is_ssl_ flag past the object, over the
// caller's stack (ThreadSanitizer's run of ServeConnections crashed with clobbered registers when
// a client thread returned; the ordinary build passed by luck of the stack's layout).
#include <gtest/gtest.h>

#include <httplib.h>

#include <cstring>
#include <new>

namespace attn::serve {
namespace {

// Builds a T in a buffer filled with a pattern and checks the library's constructor and
// destructor wrote nothing past sizeof(T) as this file sees it.
template <class T, class... Args>
void expect_fits(const char* name, Args&&... args) {
  constexpr size_t kSlack = 64;
  alignas(64) unsigned char buffer[sizeof(T) + kSlack];
  std::memset(buffer, 0xA5, sizeof buffer);
  T* object = new (buffer) T(std::forward<Args>(args)...);
  size_t past = 0;
  for (size_t i = sizeof(T); i < sizeof buffer; ++i) past += buffer[i] != 0xA5;
  object->~T();
  EXPECT_EQ(past, 0u) << "the library wrote " << past << " bytes past a " << sizeof(T) << "-byte httplib::" << name
                      << ": attn compiles httplib.h without the library's own macros (pkg-config --cflags cpp-httplib)";
}

TEST(HttplibAbi, ObjectsTheLibraryBuildsFitTheHeadersLayout) {
  expect_fits<httplib::Client>("Client", "127.0.0.1", 1);
  expect_fits<httplib::Server>("Server");
}

}  // namespace
}  // namespace attn::serve
