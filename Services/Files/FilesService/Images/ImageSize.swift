import InternalProtocol

/// A size of an image asked for on a download: `?width=&height=` (either may be left out),
/// `fit`, and `format`.
///
/// Fit modes: `inside` (the default) keeps the aspect ratio and fits within the box, never
/// enlarging; `cover` fills the box exactly, scaling and cropping the centre; `fill` stretches
/// to the box. `cover` and `fill` need both sides. The format is `jpeg`, `png` or `webp`; by
/// default the original's when it is one of them, else JPEG.
struct ImageSize: Hashable, Sendable {
    enum Fit: String, Sendable { case inside, cover, fill }

    let width: Int?
    let height: Int?
    let fit: Fit
    /// The format asked for, if any.
    let format: ImageFormat?

    /// The size `query` asks for; nil when it names neither side (the original's bytes).
    static func parse(_ query: [String: String], maxSide: Int) throws(ErrorEnvelope) -> ImageSize? {
        let width = try side("width", query, maxSide)
        let height = try side("height", query, maxSide)
        guard width != nil || height != nil else {
            if query["fit"] != nil || query["format"] != nil {
                throw ErrorEnvelope.badRequest("'fit' and 'format' need 'width' or 'height'")
            }
            return nil
        }
        guard let fit = Fit(rawValue: query["fit"]?.lowercased() ?? "inside") else {
            throw ErrorEnvelope.badRequest("Query parameter 'fit' must be inside, cover or fill")
        }
        if fit != .inside, width == nil || height == nil {
            throw ErrorEnvelope.badRequest("fit=\(fit.rawValue) needs both 'width' and 'height'")
        }
        var format: ImageFormat?
        if let name = query["format"] {
            guard let named = ImageFormat(name: name) else {
                throw ErrorEnvelope.badRequest("Query parameter 'format' must be jpeg, png or webp")
            }
            format = named
        }
        return ImageSize(width: width, height: height, fit: fit, format: format)
    }

    private static func side(_ name: String, _ query: [String: String], _ maxSide: Int) throws(ErrorEnvelope) -> Int? {
        guard let text = query[name] else { return nil }
        guard let value = Int(text), (1...maxSide).contains(value) else {
            throw ErrorEnvelope.badRequest("Query parameter '\(name)' must be a whole number in 1...\(maxSide)")
        }
        return value
    }

    /// The format of the answer for an original named `name`.
    func format(forOriginal name: String) -> ImageFormat {
        format ?? ImageFormat(extensionOf: name) ?? .jpeg
    }

    /// The name the cached copy is kept under, beside its original: everything that changes
    /// the bytes.
    func rendition(_ format: ImageFormat) -> String {
        "w\(width.map(String.init) ?? "")-h\(height.map(String.init) ?? "")-\(fit.rawValue).\(format.rawValue)"
    }
}

/// The formats resized images are written in.
enum ImageFormat: String, Sendable {
    case jpeg, png, webp

    init?(name: String) {
        switch name.lowercased() {
        case "jpeg", "jpg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        default: return nil
        }
    }

    init?(extensionOf name: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        self.init(name: String(name[name.index(after: dot)...]))
    }

    var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        }
    }
}
