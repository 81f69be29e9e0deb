import CVips
import InternalProtocol
import Logging
import ServiceRuntime

/// Resizes image files with libvips. Work is refused before decoding when the image is not a
/// JPEG, PNG, WebP or GIF, or has more pixels than allowed (its header tells), so a
/// decompression bomb costs a header read.
struct ImageResizer: Sendable {
    /// The most pixels (width × height) an original may have.
    let maxPixels: Int
    let logger: Logger

    /// The loaders an original may be read by.
    private static let loaders: Set<String> = [
        "VipsForeignLoadJpegFile", "VipsForeignLoadPngFile", "VipsForeignLoadWebpFile", "VipsForeignLoadGifFile",
    ]

    /// Starts libvips before any resize; later calls wait for the first and share its result.
    static func start() throws {
        guard started else { throw UsageError("libvips could not be started") }
    }

    /// libvips's own start returns at once to a second caller while the first is still
    /// registering its types (and settings then race the registration), so it runs once per
    /// process: Swift runs a static's initialiser once, other callers waiting for it.
    private static let started = baas_vips_start() == 0

    /// Writes `source` resized to `size` into `output` as `format`. Blocks its thread: run it
    /// off the event loops.
    func resize(_ source: String, to output: String, size: ImageSize, format: ImageFormat) throws(ErrorEnvelope) {
        defer { vips_error_clear() }
        guard let loader = vips_foreign_find_load(source).map({ String(cString: $0) }), Self.loaders.contains(loader),
            let header = baas_vips_open(source)
        else { throw ImageError.notAnImage }
        let pixels = Int(vips_image_get_width(header)) * Int(vips_image_get_height(header))
        baas_vips_release(header)
        guard pixels <= maxPixels else { throw ImageError.tooManyPixels(pixels, limit: maxPixels) }
        var image: UnsafeMutablePointer<VipsImage>?
        let (mode, crop) = Self.vipsMode(size.fit)
        // libvips's largest coordinate stands for a side left free.
        let free = Int32(VIPS_MAX_COORD)
        guard
            baas_vips_thumbnail(
                source, &image, size.width.map(Int32.init) ?? free, size.height.map(Int32.init) ?? free, mode, crop)
                == 0,
            let image
        else { throw failure("decode") }
        defer { baas_vips_release(image) }
        let saved: Int32 =
            switch format {
            case .jpeg: baas_vips_save_jpeg(image, output)
            case .png: baas_vips_save_png(image, output)
            case .webp: baas_vips_save_webp(image, output)
            }
        guard saved == 0 else { throw failure("encode") }
    }

    private static func vipsMode(_ fit: ImageSize.Fit) -> (VipsSize, VipsInteresting) {
        switch fit {
        case .inside: (VIPS_SIZE_DOWN, VIPS_INTERESTING_NONE)
        case .cover: (VIPS_SIZE_BOTH, VIPS_INTERESTING_CENTRE)
        case .fill: (VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
        }
    }

    /// libvips's reason goes to the log; the client learns only that the image could not be read.
    private func failure(_ step: String) -> ErrorEnvelope {
        logger.info(
            "image not resized", metadata: ["step": "\(step)", "reason": "\(String(cString: vips_error_buffer()))"])
        return ImageError.notAnImage
    }
}

/// The errors of image sizes (our codes: the contract has none).
enum ImageError {
    /// 6040, 415: the original is not an image the service resizes.
    static let notAnImage = ErrorEnvelope(
        code: 6040, message: "The file is not a JPEG, PNG, WebP or GIF image that can be resized", status: 415)

    /// 6041, 422: the original has too many pixels (or bytes) to resize.
    static func tooManyPixels(_ pixels: Int, limit: Int) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 6041, message: "The image has \(pixels) pixels; at most \(limit) can be resized", status: 422)
    }

    /// 6041, 422: the original is larger than the service reads to resize.
    static func tooLarge(limit: Int64) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 6041, message: "The image is larger than \(limit) bytes, the most that can be resized", status: 422)
    }

    /// 6042, 503: as many resizes as allowed are running and waiting.
    static let busy = ErrorEnvelope(
        code: 6042, message: "Too many images are being resized; try again shortly", status: 503)
}
