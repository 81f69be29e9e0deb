import Foundation

/// A path inside one app's file tree, normalised once, before any use: its names, each a
/// Unicode NFC string that can name nothing outside the tree. The root is the empty path.
/// files-service keys its tree by it; `FILE_REF` columns of the data engine hold it.
///
/// Storage never sees these names (bytes live under generated keys), so a path is a key in the
/// catalog only; the rules still refuse everything that could mean something else anywhere a
/// path is shown, copied or logged.
package struct FilePath: Hashable, Sendable, CustomStringConvertible {
    /// The longest name, in UTF-8 bytes (what most file systems allow).
    package static let maximumNameBytes = 255
    /// The longest path, in UTF-8 bytes.
    package static let maximumPathBytes = 1024

    /// The names from the root down.
    package let names: [String]

    /// The root of the tree.
    package static let root = FilePath(checked: [])

    private init(checked names: [String]) {
        self.names = names
    }

    /// The path as the catalog keys it: names joined by `/`, no leading or trailing slash.
    package var description: String { names.joined(separator: "/") }

    /// The path as it appears in a URL: each name percent-encoded, joined by `/`.
    package var urlPath: String { names.map(PercentEncoding.encodeSegment).joined(separator: "/") }

    /// 6006, 400: the path holds something no file name may.
    package static func prohibited(_ reason: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6006, message: "The path contains prohibited symbols: \(reason)", status: 400)
    }

    /// The last name; empty for the root.
    package var name: String { names.last ?? "" }

    /// Whether this is the root.
    package var isRoot: Bool { names.isEmpty }

    /// The directory holding this path (the root holds itself).
    package var parent: FilePath { FilePath(checked: Array(names.dropLast())) }

    /// Every directory above this path, top first, the root excluded.
    package var ancestors: [FilePath] {
        names.indices.dropLast().map { FilePath(checked: Array(names[...$0])) }
    }

    /// Whether `self` is `other` or lies inside it.
    package func isWithin(_ other: FilePath) -> Bool {
        names.count >= other.names.count && Array(names.prefix(other.names.count)) == other.names
    }

    /// This path moved from under `old` to under `new` (`self` must lie within `old`).
    package func rebased(from old: FilePath, onto new: FilePath) -> FilePath {
        FilePath(checked: new.names + names.dropFirst(old.names.count))
    }

    /// `name` inside this directory, checked as any name.
    package func appending(_ name: String) throws(ErrorEnvelope) -> FilePath {
        let checked = try Self.check(name: name)
        return try FilePath(validating: names + [checked])
    }

    /// Parses a path as a client sent it in a URL: percent-decoded first (once), then split on
    /// `/`, empty names dropped; refused with 6006 for `.` or `..` names, control characters
    /// and NUL, backslashes, escapes that decode to separators or dots a second time, bytes
    /// that are not UTF-8 (overlong forms included), and over-long names or paths.
    package init(encoded: some StringProtocol) throws(ErrorEnvelope) {
        guard let decoded = PercentEncoding.decode(encoded) else {
            throw Self.prohibited("a malformed percent escape or bytes that are not UTF-8")
        }
        try self.init(decoded: decoded)
    }

    /// Parses a path that is already decoded (a JSON body's `sourcePath`), with the same rules
    /// as ``init(encoded:)`` after its decoding step.
    package init(decoded: String) throws(ErrorEnvelope) {
        var names: [String] = []
        for name in decoded.split(separator: "/", omittingEmptySubsequences: true) {
            names.append(try Self.check(name: String(name)))
        }
        try self.init(validating: names)
    }

    private init(validating names: [String]) throws(ErrorEnvelope) {
        let bytes = names.reduce(0) { $0 + $1.utf8.count } + max(0, names.count - 1)
        guard bytes <= Self.maximumPathBytes else {
            throw Self.prohibited("the path is longer than \(Self.maximumPathBytes) bytes")
        }
        self.init(checked: names)
    }

    /// One name, NFC-normalised, or 6006.
    static func check(name raw: String) throws(ErrorEnvelope) -> String {
        let name = raw.precomposedStringWithCanonicalMapping
        guard !name.isEmpty else { throw Self.prohibited("an empty name") }
        guard name != ".", name != ".." else { throw Self.prohibited("'.' and '..' name no file") }
        guard name.utf8.count <= maximumNameBytes else {
            throw Self.prohibited("a name is longer than \(maximumNameBytes) bytes")
        }
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F, 0x80..<0xA0:
                throw Self.prohibited("control characters")
            case UInt32(UInt8(ascii: "\\")):
                throw Self.prohibited("backslashes")
            case UInt32(UInt8(ascii: "/")):
                throw Self.prohibited("a separator inside a name")
            default:
                continue
            }
        }
        if containsDoubleEncoding(name) {
            throw Self.prohibited("an escape that would decode to a separator, a dot or NUL")
        }
        return name
    }

    /// Whether a decoded name still holds an escape of `.`, `/`, `\` or NUL: a path encoded
    /// twice, which some layer in front could decode again.
    private static func containsDoubleEncoding(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return ["%2e", "%2f", "%5c", "%00", "%c0", "%e0"].contains { lowered.contains($0) }
    }
}

extension FilePath {
    /// The file a `FILE_REF` value names: a path (`pics/a.png`, a leading slash optional), or
    /// a URL of the file as uploads answer it and rows return it (what follows `/files/` in its
    /// path, percent-decoded). Nil for anything else: no file, or a path this type refuses.
    package init?(fileReference text: String) {
        let path: FilePath?
        if let base = FileLinks.base, text.hasPrefix(base) {
            // A URL this request's links start with: the rest is the path, whatever the base holds.
            path = try? FilePath(encoded: text.dropFirst(base.count).prefix { $0 != "?" && $0 != "#" })
        } else if let scheme = text.range(of: "://"), text.hasPrefix("http") {
            let afterHost = text[scheme.upperBound...].drop { $0 != "/" }
            guard let files = afterHost.range(of: "/files/") else { return nil }
            path = try? FilePath(encoded: afterHost[files.upperBound...].prefix { $0 != "?" && $0 != "#" })
        } else {
            path = try? FilePath(decoded: text)
        }
        guard let path, !path.isRoot else { return nil }
        self = path
    }
}
