// Colours of the timeline and the panels, for light and dark palettes: one hue per class of
// GPU activity (compute / communication / memory / other), hidden vs exposed communication.
#pragma once

#include <QColor>
#include <QPalette>

#include "c3/analyzer/open/trace.h"

namespace c3::gui {

bool is_dark(const QPalette& p);
QColor class_color(analyzer::Class c, bool dark);
// Folded blocks of several classes: the most "interesting" class wins (communication, then
// memory, then compute, then other), so exposed collectives stay visible when zoomed out.
QColor classes_color(uint8_t class_bits, bool dark);
QColor hidden_color(bool dark);   // communication under compute
QColor exposed_color(bool dark);  // communication with no compute under it
QColor nvtx_color(int depth, bool dark);
// Text that reads on a filled rectangle of colour `fill`.
QColor text_on(const QColor& fill);

}  // namespace c3::gui
