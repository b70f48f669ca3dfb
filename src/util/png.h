/* png: a small RGB PNG for the vision smoke test, written with zlib: the
 * image's left half in one colour, the right half in another. */
#ifndef DSV41_PNG_H
#define DSV41_PNG_H

#include "buf.h"

int png_two_halves(int w, int h, const unsigned char left[3], const unsigned char right[3],
                   struct buf *out);

#endif
