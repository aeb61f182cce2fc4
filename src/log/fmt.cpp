// fmt's compiled part, built once here instead of in every file that formats
// (FMT_HEADER_ONLY compiles format-inl.h, about 4 s of CPU, into each of
// them), and not taken from Debian's libfmt.so: the preloaded library must
// not bring a library of its own into the program, nor bind to a program's
// copy of fmt. Its symbols are hidden like all of ours. Including
// format-inl.h without FMT_HEADER_ONLY defines fmt's out-of-line functions;
// the templates its headers declare extern are instantiated below for char,
// the only character type used here, as fmt's own src/format.cc does.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);

}  // namespace detail
FMT_END_NAMESPACE
