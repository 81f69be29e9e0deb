import Foundation
import Testing

/// Images for the resizing tests: PNGs written here (uncompressed deflate, so no codec is
/// involved), and the format and size of an answer read from its header bytes alone, without
/// the library that wrote it.
enum TestImages {
    /// A `width` × `height` RGB PNG with a gradient.
    static func png(width: Int, height: Int) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width { raw += [UInt8(x * 255 / width), UInt8(y * 255 / height), 128] }
        }
        var header: [UInt8] = []
        header += bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlibStored(raw))
            + chunk("IEND", [])
    }

    /// The 20,000 × 20,000 one-bit PNG of zeros in `Fixtures/` (48 KiB that decode to 400
    /// million pixels), made with Python's zlib.
    static func bomb() throws -> [UInt8] {
        let url = try #require(
            Bundle.module.url(forResource: "bomb-20000x20000", withExtension: "png", subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }

    /// The format (`png`, `jpeg`, `webp`) and pixel size an image's header declares.
    static func dimensions(_ bytes: [UInt8]) -> (format: String, width: Int, height: Int)? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), bytes.count >= 24 {
            return ("png", int(bytes, 16, 4), int(bytes, 20, 4))
        }
        if bytes.starts(with: [0xFF, 0xD8]) { return jpeg(bytes) }
        if bytes.count >= 30, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return webp(bytes)
        }
        return nil
    }

    private static func jpeg(_ bytes: [UInt8]) -> (String, Int, Int)? {
        var offset = 2
        while offset + 9 < bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = int(bytes, offset + 2, 2)
            // Start-of-frame markers (C0–CF but C4, C8 and CC) carry the size.
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                return ("jpeg", int(bytes, offset + 7, 2), int(bytes, offset + 5, 2))
            }
            offset += 2 + length
        }
        return nil
    }

    private static func webp(_ bytes: [UInt8]) -> (String, Int, Int)? {
        func little(_ at: Int, _ count: Int) -> Int { (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        switch String(decoding: bytes[12..<16], as: UTF8.self) {
        case "VP8 ": return ("webp", little(26, 2) & 0x3FFF, little(28, 2) & 0x3FFF)
        case "VP8L":
            let bits = little(21, 4)
            return ("webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X": return ("webp", little(24, 3) + 1, little(27, 3) + 1)
        default: return nil
        }
    }

    private static func int(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int {
        bytes[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let end = min(start + 65_535, data.count)
            let length = end - start
            out.append(end == data.count ? 1 : 0)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += data[start..<end]
            start = end
        } while start < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + bigEndian(b << 16 | a)
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crcTable[Int(($0 ^ UInt32($1)) & 0xFF)] ^ ($0 >> 8) }
    }
}
