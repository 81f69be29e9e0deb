import DataEngine
import Foundation
import TestSupport
import Testing

/// The JSON writer's strings read back unchanged, by Foundation's parser and by ours, whether
/// they take the copy-whole path (nothing to escape) or the escaping one.
@Suite(.tags(.fast)) struct JSONWriterTests {
    static let alphabet: [Character] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "ß", "中", "😀",
        "\u{2028}",
    ]

    @Test func stringsRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        var strings = ["", "plain ascii", "quote \" inside", "back\\slash", "line\nbreak", "\u{0}", "emoji 😀 and é"]
        for _ in 0..<500 {
            strings.append(
                String(
                    (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                        Self.alphabet.randomElement(using: &generator)!
                    }))
        }
        for string in strings {
            let text = JSONValue.array([.string(string)]).jsonText
            let foundation = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String]
            #expect(foundation == [string], "\(text.debugDescription)")
            #expect(try JSONParser.parse(text) == .array([.string(string)]), "\(text.debugDescription)")
            #expect(
                !text.unicodeScalars.contains { $0.value < 0x20 },
                "control characters are escaped: \(text.debugDescription)")
        }
    }
}
