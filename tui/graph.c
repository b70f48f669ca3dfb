#include "graph.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static size_t put_cp(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    o[0] = (char)(0xe0 | cp >> 12);
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
}

/* The height in units (0..units) of value v. */
static int level(float v, double lo, double hi, int units)
{
    if (isnan(v) || hi <= lo)
        return -1;
    double f = (v - lo) / (hi - lo);
    if (f < 0)
        f = 0;
    if (f > 1)
        f = 1;
    int l = (int)lround(f * units);
    return l == 0 && f > 0 ? 1 : l; /* anything above zero shows */
}

/* Braille dots for one column half (left or right) filled up to `fill` of
 * the 4 dot rows of this cell (bottom first). */
static unsigned braille_col(int fill, bool right)
{
    static const unsigned L[4] = {0x40, 0x04, 0x02, 0x01}, R[4] = {0x80, 0x20, 0x10, 0x08};
    unsigned bits = 0;
    for (int d = 0; d < fill && d < 4; d++)
        bits |= right ? R[d] : L[d];
    return bits;
}

void graph_render(const float *vals, int n, double lo, double hi, int w, int rows, enum glyphs g,
                  char *out, size_t rowsz)
{
    int per = g == GLYPH_BRAILLE ? 2 : 1;      /* samples a cell */
    int sub = g == GLYPH_BRAILLE ? 4 : g == GLYPH_BLOCK ? 8 : 1; /* units a cell high */
    for (int r = 0; r < rows; r++) {
        char *o = out + (size_t)r * rowsz;
        size_t k = 0;
        int base = (rows - 1 - r) * sub; /* units below this row */
        for (int c = 0; c < w && k + 4 < rowsz; c++) {
            int lv[2] = {-1, -1};
            for (int s = 0; s < per; s++) {
                int idx = n - (w - c) * per + s; /* right-aligned: newest at the right edge */
                if (idx >= 0 && idx < n)
                    lv[s] = level(vals[idx], lo, hi, rows * sub);
            }
            int f0 = lv[0] - base, f1 = lv[1] - base;
            if (g == GLYPH_BRAILLE) {
                unsigned bits = (lv[0] >= 0 ? braille_col(f0, false) : 0) |
                                (lv[1] >= 0 ? braille_col(f1, true) : 0);
                k += bits ? put_cp(o + k, 0x2800 + bits) : put_cp(o + k, ' ');
            } else if (g == GLYPH_BLOCK) {
                k += f0 <= 0 ? put_cp(o + k, ' ') : put_cp(o + k, 0x2580 + (f0 >= 8 ? 8 : f0));
            } else {
                o[k++] = f0 > 0 ? '#' : lv[0] >= 0 && r == rows - 1 ? '_' : ' ';
            }
        }
        o[k] = '\0';
    }
}

void graph_gauge(double frac, int w, enum glyphs g, char *out, size_t sz)
{
    if (isnan(frac) || frac < 0)
        frac = 0;
    if (frac > 1)
        frac = 1;
    size_t k = 0;
    int eighths = (int)lround(frac * w * 8);
    for (int c = 0; c < w && k + 4 < sz; c++, eighths -= 8) {
        if (g == GLYPH_ASCII)
            out[k++] = eighths >= 4 ? '#' : '-';
        else if (eighths >= 8)
            k += put_cp(out + k, 0x2588);
        else if (eighths > 0)
            k += put_cp(out + k, 0x2590 - eighths); /* U+258F one eighth .. U+2589 seven */
        else
            k += put_cp(out + k, 0x2591); /* light shade: the empty part */
    }
    out[k] = '\0';
}
