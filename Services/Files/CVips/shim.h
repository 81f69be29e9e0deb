// libvips for files-service's image sizes. Swift cannot call C's variadic functions, so each
// call the service makes is fixed here as a small inline function with its options spelled out.
#ifndef BAAS_CVIPS_SHIM_H
#define BAAS_CVIPS_SHIM_H

#include <vips/vips.h>

/// Starts libvips once per process: one worker thread per operation (the service bounds how
/// many run at once), no operation cache (every resize reads a new file), and only the
/// loaders libvips trusts with untrusted input. Answers 0 on success.
static inline int baas_vips_start(void) {
    if (VIPS_INIT("files-service")) return -1;
    vips_concurrency_set(1);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_block_untrusted_set(TRUE);
    return 0;
}

/// Opens `path` reading its header only (pixels are decoded later, top to bottom); NULL when
/// it is no image libvips reads.
static inline VipsImage *baas_vips_open(const char *path) {
    return vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
}

/// Shrinks (or, with `size` BOTH or FORCE, scales) the image in `path` to fit `width` ×
/// `height`, cropping the centre when `crop` is VIPS_INTERESTING_CENTRE. Answers 0 on success.
static inline int baas_vips_thumbnail(const char *path, VipsImage **out, int width, int height, VipsSize size,
                                      VipsInteresting crop) {
    return vips_thumbnail(path, out, width, "height", height, "size", size, "crop", crop,
                          "fail_on", VIPS_FAIL_ON_ERROR, NULL);
}

/// Writes `image` to `path` as JPEG (quality 85), without metadata. Answers 0 on success.
static inline int baas_vips_save_jpeg(VipsImage *image, const char *path) {
    return vips_jpegsave(image, path, "Q", 85, "strip", TRUE, NULL);
}

/// Writes `image` to `path` as PNG, without metadata. Answers 0 on success.
static inline int baas_vips_save_png(VipsImage *image, const char *path) {
    return vips_pngsave(image, path, "strip", TRUE, NULL);
}

/// Writes `image` to `path` as WebP (quality 80), without metadata. Answers 0 on success.
static inline int baas_vips_save_webp(VipsImage *image, const char *path) {
    return vips_webpsave(image, path, "Q", 80, "strip", TRUE, NULL);
}

/// Releases an image.
static inline void baas_vips_release(VipsImage *image) { g_object_unref(image); }

#endif
