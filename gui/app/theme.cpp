#include "theme.h"

namespace c3::gui {

using analyzer::Class;

bool is_dark(const QPalette& p) {
  return p.color(QPalette::Window).lightness() < 128;
}

QColor class_color(Class c, bool dark) {
  // Colour-blind-safe hues (Okabe-Ito), a little lighter on dark backgrounds.
  switch (c) {
    case Class::compute:
      return dark ? QColor(86, 180, 233) : QColor(0, 114, 178);
    case Class::communication:
      return dark ? QColor(240, 150, 60) : QColor(213, 94, 0);
    case Class::memory:
      return dark ? QColor(60, 200, 150) : QColor(0, 158, 115);
    case Class::other:
      return dark ? QColor(170, 170, 170) : QColor(128, 128, 128);
  }
  return {};
}

QColor classes_color(uint8_t bits, bool dark) {
  for (const Class c : {Class::communication, Class::memory, Class::compute, Class::other}) {
    if ((bits & (1u << static_cast<unsigned>(c))) != 0) return class_color(c, dark);
  }
  return class_color(Class::other, dark);
}

QColor hidden_color(bool dark) {
  return dark ? QColor(80, 190, 110) : QColor(46, 139, 87);
}

QColor exposed_color(bool dark) {
  return dark ? QColor(240, 90, 90) : QColor(200, 30, 45);
}

QColor nvtx_color(int depth, bool dark) {
  static const QColor light[] = {QColor(204, 121, 167), QColor(170, 120, 200),
                                 QColor(150, 150, 90)};
  static const QColor dark_colors[] = {QColor(220, 150, 190), QColor(190, 150, 225),
                                       QColor(190, 190, 120)};
  const auto i = static_cast<size_t>(depth < 0 ? 0 : depth) % 3;
  return dark ? dark_colors[i] : light[i];
}

QColor text_on(const QColor& fill) {
  return fill.lightness() > 140 ? QColor(0, 0, 0) : QColor(255, 255, 255);
}

}  // namespace c3::gui
