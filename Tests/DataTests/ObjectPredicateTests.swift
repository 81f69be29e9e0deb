import DataEngine
import Foundation
import InternalProtocol
import QueryLanguage
import TestSupport
import Testing

/// Where clauses evaluated in memory (real-time subscriptions) answer as the SQL compiler's
/// statements do on the same rows: hundreds of generated clauses, each run both ways.
@Suite(.timeLimit(.minutes(20))) struct ObjectPredicateTests {
    @Test func generatedClausesMatchTheSameObjectsInMemoryAsInSQL() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create(
                "P", #"{"name": "seed", "age": 1, "score": 1.5, "active": true, "born": 1577836800000}"#)
            var random = SplitMix(seed: 17)
            for _ in 0..<40 {
                var fields: [String] = []
                if let name = random.pick(Self.names) { fields.append(#""name": \#(JSONValue.string(name).jsonText)"#) }
                if let age = random.pick(Self.ages) { fields.append(#""age": \#(age)"#) }
                if let score = random.pick(Self.scores) { fields.append(#""score": \#(score)"#) }
                if let active = random.pick([true, false]) { fields.append(#""active": \#(active)"#) }
                if let born = random.pick(Self.dates) { fields.append(#""born": \#(born)"#) }
                _ = try await fixture.create("P", "{" + fields.joined(separator: ", ") + "}")
            }
            let objects = try await fixture.engine.find(
                "P", query: try FindQuery(QueryParameters(queryItems: [(name: "pageSize", value: "100")])),
                identity: fixture.rest,
                logger: fixture.logger
            ).map { try #require(try JSONParser.parse($0).object) }
            #expect(objects.count == 41)

            var compared = 0
            for _ in 0..<400 {
                let text = Self.condition(&random, depth: 0)
                let sql: Set<String>?
                do {
                    let query = try FindQuery(
                        QueryParameters(queryItems: [(name: "pageSize", value: "100"), (name: "where", value: text)]))
                    sql = Set(
                        try await fixture.engine.find("P", query: query, identity: fixture.rest, logger: fixture.logger)
                            .map {
                                try #require(try JSONParser.parse($0).object?["objectId"]?.string)
                            })
                } catch let error as ErrorEnvelope {
                    #expect(error.status == 400, "\(text): \(error.message)")
                    sql = nil
                }
                guard let sql else {
                    await #expect(throws: ErrorEnvelope.self, "\(text) is refused in SQL, so in memory too") {
                        _ = try await fixture.engine.changeFilter(app: fixture.appID, table: "P", whereClause: text)
                    }
                    continue
                }
                let predicate = try #require(
                    try await fixture.engine.changeFilter(app: fixture.appID, table: "P", whereClause: text).predicate)
                let memory = Set(objects.filter(predicate.matches).compactMap { $0["objectId"]?.string })
                #expect(memory == sql, "\(text): \(memory.count) in memory, \(sql.count) in SQL")
                compared += 1
            }
            #expect(compared > 300, "most generated clauses are valid")
        }
    }

    @Test func clausesNeedingTheDatabaseAreRefused() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Q", #"{"name": "x", "meta": {"a": 1}}"#)
            for (text, code) in [
                ("owner.name = 'x'", 1019), ("lower(name) = 'x'", 1019), ("meta IS NULL", 1019), ("nope = 1", 1011),
                ("name = ", 1018),
            ] {
                do {
                    _ = try await fixture.engine.changeFilter(app: fixture.appID, table: "Q", whereClause: text)
                    Issue.record("\(text) was accepted")
                } catch let error as ErrorEnvelope {
                    #expect(
                        error.code == code || (code == 1018 && error.code == 1017),
                        "\(text): \(error.code) \(error.message)")
                }
            }
            await #expect(throws: ErrorEnvelope.self) {
                _ = try await fixture.engine.changeFilter(app: fixture.appID, table: "Nope", whereClause: nil)
            }
        }
    }

    static let names: [String?] = ["a", "b", "ab", "Ab", "b%c", "", "a_c", "é", "zz", nil]
    static let ages: [Int?] = [-3, 0, 1, 2, 3, 5, 40, nil]
    static let scores: [Double?] = [-1.5, 0, 2.5, 3, 10.25, nil]
    static let dates: [Int64?] = [1577836800000, 1577836800123, 1609459200000, 946684800000, nil]

    /// A random where clause over P's columns, nested up to three levels.
    static func condition(_ random: inout SplitMix, depth: Int) -> String {
        let choice = random.below(depth < 3 ? 14 : 10)
        switch choice {
        case 0:
            return
                "name \(random.element(["=", "!=", "<", ">=", "<>"])) \(random.element(["'a'", "'ab'", "'b'", "''", "'é'", "3", "null"]))"
        case 1:
            return
                "age \(random.element(["=", "!=", "<", "<=", ">", ">="])) \(random.element(["0", "2", "-3", "'3'", "2.5", "null", "40"]))"
        case 2:
            return
                "score \(random.element(["=", "<", ">", ">=", "!="])) \(random.element(["0", "2.5", "3", "-1.5", "'2.5'", "10"]))"
        case 3: return "active \(random.element(["=", "!="])) \(random.element(["true", "false", "null", "'true'"]))"
        case 4:
            return
                "born \(random.element(["<", ">", "=", ">="])) \(random.element(["'2020-01-01'", "1577836800123", "'2021-01-01T00:00:00Z'", "'01/01/2000'", "'nonsense'"]))"
        case 5:
            return
                "name \(random.element(["LIKE", "NOT LIKE"])) \(random.element(["'a%'", "'%b'", "'_b'", "'a\\_c'", "'%'", "'b\\%c'", "'A%'"]))"
        case 6:
            return
                "\(random.element(["name", "age", "score", "active", "born"])) IS \(random.element(["NULL", "NOT NULL"]))"
        case 7:
            return "age \(random.element(["IN", "NOT IN"])) (\(random.element(["1, 2", "0", "3, 40, 5", "1, null"])))"
        case 8:
            return
                "\(random.element(["age", "score"])) \(random.element(["BETWEEN", "NOT BETWEEN"])) \(random.element(["0 AND 3", "-5 AND 2", "3 AND 1"]))"
        case 9:
            return
                "\(random.element(["age + 1", "age * 2", "age % 2", "age / 2", "score - age", "-age", "score * 2"])) \(random.element(["=", ">", "<"])) \(random.element(["0", "1", "4", "5.5"]))"
        case 10: return "NOT (\(condition(&random, depth: depth + 1)))"
        case 11, 12:
            return
                "(\(condition(&random, depth: depth + 1))) \(choice == 11 ? "AND" : "OR") (\(condition(&random, depth: depth + 1)))"
        default: return "name \(random.element(["IN", "NOT IN"])) ('a', 'b', \(random.element(["'zz'", "null", "''"])))"
        }
    }
}

/// A small seeded generator, so a failing clause comes back on every run.
struct SplitMix {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func element<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// An element, or nil one time in four.
    mutating func pick<T>(_ items: [T?]) -> T? { below(4) == 0 ? nil : element(items) ?? nil }
}
