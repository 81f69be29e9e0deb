import DataEngine
import Foundation
import TestSupport
import Testing

@testable import MessagingService

/// Selectors are evaluated in memory on the shared query-language tree; the same text as a where
/// clause is compiled to SQL by the data engine. Over random typed rows with missing values and
/// random conditions (comparisons, LIKE, IN, BETWEEN, IS NULL, AND / OR / NOT), both must select
/// exactly the same rows (issue 16 item 3).
@Suite(.timeLimit(.minutes(20))) struct SelectorSQLPropertyTests {
    static let cities = ["Tokyo", "Paris", "Lima", "Oslo", "tokyo"]

    /// One row: its values, nil where the header is missing.
    struct Row {
        var city: String?
        var n: Int?
        var price: Double?
        var flag: Bool?

        var headers: JSONObject {
            var object = JSONObject()
            if let city { object["city"] = .string(city) }
            if let n { object["n"] = .integer(Int64(n)) }
            if let price { object["price"] = .number(price) }
            if let flag { object["flag"] = .bool(flag) }
            return object
        }

        var json: String {
            func text(_ value: (some CustomStringConvertible)?) -> String { value.map { "\($0)" } ?? "null" }
            return
                #"{"city": \#(city.map { "\"\($0)\"" } ?? "null"), "n": \#(text(n)), "price": \#(text(price)), "flag": \#(text(flag))}"#
        }
    }

    @Test func selectorsSelectWhatTheirWhereClausesFind() async throws {
        let seed = SeededGenerator.seed("SELECTOR_TEST_SEED")
        var random = SeededGenerator(seed: seed)
        // The first row has every value, so every column exists with its type.
        let rows =
            [Row(city: "Tokyo", n: 5, price: 2.5, flag: true)]
            + (0..<99).map { _ in
                Row(
                    city: Bool.random(using: &random) || Bool.random(using: &random)
                        ? Self.cities.randomElement(using: &random) : nil,
                    n: Int.random(in: 0...3, using: &random) == 0 ? nil : Int.random(in: 0...9, using: &random),
                    price: Int.random(in: 0...3, using: &random) == 0
                        ? nil : Double(Int.random(in: 0...20, using: &random)) / 2,
                    flag: Int.random(in: 0...2, using: &random) == 0 ? nil : Bool.random(using: &random))
            }
        let conditions = (0..<300).map { _ in Self.condition(depth: 0, &random) }
        try await EngineFixture.with { fixture in
            var ids: [String] = []
            for row in rows {
                let saved = try await fixture.create("Header", row.json)
                ids.append(try #require(saved["objectId"] as? String))
            }
            for text in conditions {
                let selector = try Selector(text)
                let inMemory = Set(zip(rows, ids).filter { selector.selects($0.0.headers) }.map(\.1))
                let found = try await fixture.find("Header", [("where", text), ("pageSize", "100")])
                let inSQL = Set(found.compactMap { $0["objectId"] as? String })
                let agree = inMemory == inSQL
                #expect(
                    agree,
                    "seed \(seed): \(text) selects \(inMemory.count) rows in memory, \(inSQL.count) in SQL, \(inMemory.symmetricDifference(inSQL).count) differ"
                )
            }
        }
    }

    /// A random condition over the four columns, nested at most three deep.
    static func condition(depth: Int, _ random: inout SeededGenerator) -> String {
        if depth < 3, Int.random(in: 0...2, using: &random) == 0 {
            let left = condition(depth: depth + 1, &random)
            let right = condition(depth: depth + 1, &random)
            switch Int.random(in: 0...2, using: &random) {
            case 0: return "(\(left) AND \(right))"
            case 1: return "(\(left) OR \(right))"
            default: return "NOT (\(left))"
            }
        }
        let comparisons = ["=", "!=", "<>", "<", "<=", ">", ">="]
        let comparison = comparisons.randomElement(using: &random)!
        switch Int.random(in: 0...9, using: &random) {
        case 0: return "city \(comparison) '\(cities.randomElement(using: &random)!)'"
        case 1: return "n \(comparison) \(Int.random(in: 0...9, using: &random))"
        case 2: return "price \(comparison) \(Double(Int.random(in: 0...20, using: &random)) / 2)"
        case 3: return "flag = \(Bool.random(using: &random))"
        case 4:
            return
                "city \(Bool.random(using: &random) ? "" : "NOT ")LIKE '\(["T%", "%o%", "_a%", "%a", "Lim_", "%"].randomElement(using: &random)!)'"
        case 5:
            let items = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                "\(Int.random(in: 0...9, using: &random))"
            }
            return "n \(Bool.random(using: &random) ? "" : "NOT ")IN (\(items.joined(separator: ", ")))"
        case 6:
            let items = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                "'\(cities.randomElement(using: &random)!)'"
            }
            return "city \(Bool.random(using: &random) ? "" : "NOT ")IN (\(items.joined(separator: ", ")))"
        case 7:
            let low = Int.random(in: 0...9, using: &random)
            return
                "n \(Bool.random(using: &random) ? "" : "NOT ")BETWEEN \(low) AND \(low + Int.random(in: 0...4, using: &random))"
        case 8:
            let low = Double(Int.random(in: 0...20, using: &random)) / 2
            return "price BETWEEN \(low) AND \(low + 3)"
        default:
            return
                "\(["city", "n", "price", "flag"].randomElement(using: &random)!) IS \(Bool.random(using: &random) ? "" : "NOT ")NULL"
        }
    }
}
