import DataEngine
import Foundation
import InternalProtocol
import QueryLanguage
import TestSupport
import Testing

/// Every where-clause operator, date form and query parameter against a real table.
@Suite(.timeLimit(.minutes(20))) struct QueryTests {
    static let people = [
        #"{"name": "Ann", "age": 31, "height": 1.62, "active": true, "city": "Austin", "tags": ["a", "b"]}"#,
        #"{"name": "Bob", "age": 25, "height": 1.80, "active": false, "city": "Boston", "tags": ["b"]}"#,
        #"{"name": "Cid", "age": 40, "height": 1.75, "active": true, "city": "Austin", "tags": []}"#,
        #"{"name": "Dee", "age": 19, "height": 1.55, "active": true, "city": "O'Hare"}"#,
    ]

    /// Seeds `Person` (and a DATETIME column `born`) and runs `body`.
    static func withPeople(_ body: @Sendable (EngineFixture) async throws -> Void) async throws {
        try await EngineFixture.with { fixture in
            for person in people { _ = try await fixture.create("Person", person) }
            _ = try await fixture.engine.addColumns(
                "Person", columns: [ColumnSchema(name: "born", type: .datetime)], identity: fixture.serverCode,
                logger: fixture.logger)
            let births = ["Ann": "1994-03-23T10:00:00Z", "Bob": "2000-01-01T00:00:00Z", "Cid": "1985-12-22T00:00:00Z"]
            for (name, born) in births {
                let changes = try fixture.object(#"{"born": "\#(born)"}"#)
                let count = try await fixture.engine.updateBulk(
                    "Person", condition: .comparison(.property(.init(["name"])), .equal, .string(name)),
                    changes: changes,
                    identity: fixture.rest, logger: fixture.logger)
                #expect(count == 1)
            }
            try await body(fixture)
        }
    }

    static let whereCases: [(String, [String])] = [
        ("age = 31", ["Ann"]),
        ("age != 31", ["Bob", "Cid", "Dee"]),
        ("age <> 31", ["Bob", "Cid", "Dee"]),
        ("age > 30", ["Ann", "Cid"]),
        ("age>30", ["Ann", "Cid"]),
        ("age >= 31", ["Ann", "Cid"]),
        ("age => 31", ["Ann", "Cid"]),
        ("age < 25", ["Dee"]),
        ("age <= 25", ["Bob", "Dee"]),
        ("height > 1.7", ["Bob", "Cid"]),
        ("age = '25'", ["Bob"]),
        ("name = 'Ann'", ["Ann"]),
        ("name LIKE 'A%'", ["Ann"]),
        ("name like '%e%'", ["Dee"]),
        ("name NOT LIKE '%n%'", ["Bob", "Cid", "Dee"]),
        ("city = 'O''Hare'", ["Dee"]),
        ("name IN ('Ann', 'Bob')", ["Ann", "Bob"]),
        ("name NOT IN ('Ann', 'Bob')", ["Cid", "Dee"]),
        ("age IN (25, 40)", ["Bob", "Cid"]),
        ("born IS NULL", ["Dee"]),
        ("born is not null", ["Ann", "Bob", "Cid"]),
        ("tags IS NULL", ["Dee"]),
        ("age BETWEEN 20 AND 31", ["Ann", "Bob"]),
        ("age NOT BETWEEN 20 AND 31", ["Cid", "Dee"]),
        ("active = true", ["Ann", "Cid", "Dee"]),
        ("active = false AND city = 'Boston'", ["Bob"]),
        ("city = 'Austin' OR age < 20", ["Ann", "Cid", "Dee"]),
        ("NOT (city = 'Austin')", ["Bob", "Dee"]),
        ("(age > 20 AND age < 35) OR name = 'Dee'", ["Ann", "Bob", "Dee"]),
        ("age + 1 = 32", ["Ann"]),
        ("age * 2 > 70", ["Cid"]),
        ("-age < -35", ["Cid"]),
        ("name = null", []),
        ("born > '22-Dec-1990'", ["Ann", "Bob"]),
        ("born after '03/23/1994'", ["Ann", "Bob"]),
        ("born before 946684800000", ["Ann", "Cid"]),
        ("born at or after 946684800000", ["Bob"]),
        ("born at or before '1985-12-22'", ["Cid"]),
        ("born < '2000-01-01T00:00:00.000Z'", ["Ann", "Cid"]),
        ("born = '1994-03-23T10:00:00Z'", ["Ann"]),
        ("objectId IS NOT NULL AND created > 0", ["Ann", "Bob", "Cid", "Dee"]),
        ("TRUE", ["Ann", "Bob", "Cid", "Dee"]),
        // Double quotes delimit strings (as in MySQL, which Backendless runs on), not names.
        ("\"name\" = 'Ann'", []),
        ("name = \"Ann\"", ["Ann"]),
    ]

    @Test func everyOperatorSelectsTheRightRows() async throws {
        try await Self.withPeople { fixture in
            for (clause, expected) in Self.whereCases {
                let rows = try await fixture.find("Person", [("where", clause)])
                let names = rows.compactMap { $0["name"] as? String }.sorted()
                #expect(names == expected.sorted(), "where \(clause)")
            }
        }
    }

    static let badClauses: [(String, Int)] = [
        ("age >", 1017), ("age = 'abc'", 1017), ("nosuch = 1", 1011), ("name LIKE 5 AND age LIKE '1'", 1017),
        ("born > 'not a date'", 1017), ("address.city = 'X'", 1011), ("Person[friends].objectId = 'x'", 1011),
        ("distance(30.2, -97.7, coordinates.latitude, coordinates.longitude) < mi(200)", 1011),
        ("distance(30.2, -97.7, age, age) < mi('far')", 1017), ("distance(30.2, -97.7, age) < 5", 1017),
        ("age = 1; DROP TABLE x", 1017), ("name = 'x' OR 1=1 --", 1017),
        ("tags = 'a'", 1017), ("count(age) > 1", 1017),
        (String(repeating: "(", count: 40) + "age = 1" + String(repeating: ")", count: 40), 1018),
    ]

    @Test func badClausesAreClientErrorsAndChangeNothing() async throws {
        try await Self.withPeople { fixture async throws in
            for (clause, code) in Self.badClauses {
                let error = await #expect(throws: ErrorEnvelope.self, "where \(clause)") {
                    _ = try await fixture.find("Person", [("where", clause)])
                }
                #expect(error?.code == code, "where \(clause): \(error?.message ?? "")")
                #expect(error?.status == 400)
                // A clause that parses but fails later must not delete anything either.
                if let condition = try? QueryParser.condition(clause) {
                    _ = try? await fixture.engine.deleteBulk(
                        "Person", condition: condition, identity: fixture.rest, logger: fixture.logger)
                }
            }
            #expect(try await fixture.rowCount("Person") == 4)
        }
    }

    @Test func propertiesSortingAndPaging() async throws {
        try await Self.withPeople { fixture in
            let sorted = try await fixture.find("Person", [("sortBy", "age DESC"), ("props", "name,age")])
            #expect(sorted.map { $0["name"] as? String } == ["Cid", "Ann", "Bob", "Dee"])
            #expect(Set(sorted[0].keys) == ["objectId", "name", "age", "___class"])
            let repeated = try await fixture.find(
                "Person", [("property", "name"), ("property", "city"), ("sortBy", "city, name desc")])
            #expect(repeated.map { $0["name"] as? String } == ["Cid", "Ann", "Bob", "Dee"])
            let all = try await fixture.find(
                "Person", [("props", "*"), ("pageSize", "2"), ("offset", "1"), ("sortBy", "name asc")])
            #expect(all.map { $0["name"] as? String } == ["Bob", "Cid"])
            #expect(all[0]["___class"] as? String == "Person")
            #expect(all[0]["created"] is Int)
            let excluded = try await fixture.find("Person", [("excludeProps", "tags,height"), ("pageSize", "1")])
            #expect(excluded[0]["tags"] == nil && excluded[0]["height"] == nil && excluded[0]["age"] != nil)
            let defaultPage = try await fixture.find("Person", [])
            #expect(defaultPage.count == 4)
            #expect(defaultPage.map { $0["name"] as? String } == ["Ann", "Bob", "Cid", "Dee"])
            for (name, value) in [("pageSize", "0"), ("pageSize", "101"), ("pageSize", "x"), ("offset", "-1")] {
                do {
                    _ = try await fixture.find("Person", [(name, value)])
                    Issue.record("\(name)=\(value) was accepted")
                } catch let error as ErrorEnvelope {
                    #expect(error.code == 1016 && error.status == 400, "\(name)=\(value)")
                }
            }
            #expect(try await fixture.find("Person", [("pageSize", "100"), ("offset", "4")]).isEmpty)
        }
    }

    @Test func aggregatesWithGroupByAndHaving() async throws {
        try await Self.withPeople { fixture in
            let groups = try await fixture.find(
                "Person",
                [
                    ("props", "city, Count(objectId) as total, Avg(age) as meanAge"), ("groupBy", "city"),
                    ("sortBy", "total desc, city"),
                ])
            #expect(groups.map { $0["city"] as? String } == ["Austin", "Boston", "O'Hare"])
            #expect(groups.map { $0["total"] as? Int } == [2, 1, 1])
            #expect(groups[0]["meanAge"] as? Double == 35.5)
            let having = try await fixture.find(
                "Person", [("props", "city, Count(objectId) as total"), ("groupBy", "city"), ("having", "total > 1")])
            #expect(having.map { $0["city"] as? String } == ["Austin"])
            let whole = try await fixture.find(
                "Person", [("props", "Max(age) as oldest, Min(born) as earliest, Sum(age)")])
            #expect(whole.count == 1)
            #expect(whole[0]["oldest"] as? Int == 40)
            #expect(whole[0]["earliest"] as? Int == 504_057_600_000)
            #expect(whole[0]["sum"] as? Double == 115)
            let distinct = try await fixture.find("Person", [("props", "city"), ("distinct", "true")])
            #expect(distinct.map { $0["city"] as? String } == ["Austin", "Boston", "O'Hare"])
            let count = try await fixture.engine.count(
                "Person",
                query: try FindQuery(QueryParameters(queryItems: [(name: "where", value: "age > 20")]), paged: false),
                identity: fixture.rest, logger: fixture.logger)
            #expect(count == 3)
            let groupCount = try await fixture.engine.count(
                "Person",
                query: try FindQuery(QueryParameters(queryItems: [(name: "groupBy", value: "city")]), paged: false),
                identity: fixture.rest, logger: fixture.logger)
            #expect(groupCount == 3)
        }
    }

    @Test func hostileIdentifiersAreRefused() async throws {
        try await Self.withPeople { fixture in
            let attempts: [[(String, String)]] = [
                [("sortBy", "name; DROP TABLE \"Person\"")], [("sortBy", "name DESC, (SELECT 1)")],
                [("props", "name, pg_sleep(1)")], [("props", "\"name\"\"; --\"")],
                [("groupBy", "city) UNION SELECT 1 --")],
                [("props", "name as \"x\"\" FROM pg_user --\"")], [("excludeProps", "nosuch")],
            ]
            for parameters in attempts {
                do {
                    _ = try await fixture.find("Person", parameters)
                    Issue.record("accepted \(parameters)")
                } catch let error as ErrorEnvelope {
                    #expect(error.status == 400, "\(parameters): \(error.message)")
                }
            }
            for table in ["Person\"; DROP TABLE x; --", "pg_catalog.pg_user", "../etc"] {
                do {
                    _ = try await fixture.create(table, #"{"a": 1}"#)
                    Issue.record("created table \(table)")
                } catch let error as ErrorEnvelope {
                    #expect(error.code == 1020, "\(table)")
                }
            }
            do {
                _ = try await fixture.create("Person", #"{"bad\"; DROP TABLE x; --": 1}"#)
                Issue.record("created a hostile column")
            } catch let error as ErrorEnvelope {
                #expect(error.code == 1020)
            }
            #expect(try await fixture.rowCount("Person") == 4)
        }
    }
}

/// `props` as SDKs send it: aliases, `*` beside aliases, functions and exclusions, and the
/// column functions Backendless offers in props and where clauses.
@Suite(.timeLimit(.minutes(20))) struct PropertyListTests {
    /// A row's JSON has each key once: an item named twice is selected once, and two items that
    /// would answer under one key are refused (schemathesis found `props=name&property=name` with
    /// `loadRelations` a 500, and without it a row with `name` twice).
    @Test func eachKeyIsAnsweredOnce() async throws {
        try await QueryTests.withPeople { fixture in
            let twice = try FindQuery(
                QueryParameters(queryItems: [(name: "props", value: "name"), (name: "property", value: "name")]))
            #expect(twice.properties?.count == 1)
            let rows = try await fixture.find("Person", [("props", "name"), ("property", "name"), ("sortBy", "name")])
            #expect(rows.map { $0["name"] as? String }.prefix(3) == ["Ann", "Bob", "Cid"])
            for props in [
                "name,objectId as name", "age as objectId", "name as ___class", "*,age as city",
                "Count(age) as n,Sum(age) as n",
            ] {
                try await fixture.expectCode(1017, props) { try await fixture.find("Person", [("props", props)]).count }
            }
        }
    }

    @Test func aliasesStarsExclusionsAndFunctions() async throws {
        try await QueryTests.withPeople { fixture in
            let ann = [("where", "name = 'Ann'")]
            let aliased = try await fixture.find("Person", ann + [("props", "age as Age,name")])
            #expect(Set(aliased[0].keys) == ["Age", "name", "objectId", "___class"] && aliased[0]["Age"] as? Int == 31)

            let starred = try await fixture.find(
                "Person", ann + [("props", "*,age as Age,UPPER(name)"), ("excludeProps", "tags,height")])
            #expect(
                starred[0]["Age"] as? Int == 31 && starred[0]["age"] as? Int == 31
                    && starred[0]["Upper"] as? String == "ANN")
            #expect(
                starred[0]["tags"] == nil && starred[0]["height"] == nil && starred[0]["city"] as? String == "Austin")
            #expect(starred[0]["created"] is Int && starred[0]["___class"] as? String == "Person")

            let functions = try await fixture.find(
                "Person",
                ann + [
                    (
                        "props",
                        "TIME(born),DATE(born) as day,YEAR(born) as y,MONTH(born) as m,LOWER(city) as c,LENGTH(name) as n,"
                            + "CONCAT(name, '-', city) as label,SUBSTRING(city, 2, 3) as part,UNIXTIMESTAMP(born) as epoch"
                    )
                ])
            let row = functions[0]
            #expect(row["Time"] as? String == "10:00:00" && row["day"] as? String == "1994-03-23")
            #expect(
                row["y"] as? Int == 1994 && row["m"] as? Int == 3 && row["c"] as? String == "austin"
                    && row["n"] as? Int == 3)
            #expect(
                row["label"] as? String == "Ann-Austin" && row["part"] as? String == "ust"
                    && row["epoch"] as? Int == 764_416_800)

            let byYear = try await fixture.find(
                "Person", [("where", "YEAR(born) < 1995 AND UPPER(city) = 'AUSTIN'"), ("sortBy", "name")])
            #expect(byYear.map { $0["name"] as? String } == ["Ann", "Cid"])
            let now = try await fixture.find("Person", [("where", "born < NOW()"), ("props", "name")])
            #expect(now.count == 3)
            for (clause, code) in [
                ("YEAR(name) = 1", 1017), ("UPPER(age) = 'A'", 1017), ("SUBSTRING(name) = 'A'", 1017),
                ("NOSUCH(name) = 1", 1017),
            ] {
                try await fixture.expectCode(code, clause) {
                    try await fixture.find("Person", [("where", clause)]).count
                }
            }
        }
    }
}
