import DataEngine
import Foundation
import InternalProtocol
import Permissions
import PostgresNIO
import QueryLanguage
import TestSupport
import Testing

/// The relation API's rules on the shared engine: counts as the seed defines them, one-to-one
/// limits, declaration through the column argument, cascades, errors and permissions.
@Suite(.timeLimit(.minutes(20))) struct RelationEngineTests {
    @Test func addAndDeleteCountWhatChangedAndSetWhatItHolds() async throws {
        try await EngineFixture.with { fixture in
            let people = try await fixture.objects("Person", ["Ann", "Bob", "Cy", "Di"])
            let (ann, bob, cy, di) = (people[0], people[1], people[2], people[3])
            let friends = try RelationColumnArgument("friends:Person:n")
            // Unknown ids are ignored and not counted; the column is declared by the first add.
            #expect(try await fixture.change(.add, "Person", ann, friends, .ids([bob, cy, "missing"])) == 2)
            #expect(try await fixture.change(.add, "Person", ann, friends, .ids([bob])) == 0)
            #expect(try await fixture.children("Person", ann, "friends") == ["Bob", "Cy"])
            // Set replaces and answers the children now set: Cy stays (counted), Di joins, Bob leaves.
            #expect(try await fixture.change(.set, "Person", ann, friends, .ids([cy, di, "missing"])) == 2)
            #expect(try await fixture.children("Person", ann, "friends") == ["Cy", "Di"])
            #expect(try await fixture.change(.delete, "Person", ann, friends, .ids([cy, "missing"])) == 1)
            #expect(try await fixture.children("Person", ann, "friends") == ["Di"])
            // Where clauses select on the child table; already-linked children do not count.
            let startsWithB = try QueryParser.condition("name LIKE 'B%' OR name = 'Di'")
            #expect(try await fixture.change(.add, "Person", ann, friends, .matching(startsWithB)) == 1)
            #expect(try await fixture.children("Person", ann, "friends") == ["Di", "Bob"])
            #expect(try await fixture.change(.delete, "Person", ann, friends, .matching(startsWithB)) == 2)
            #expect(try await fixture.children("Person", ann, "friends") == [])
            // A child named twice links once.
            #expect(try await fixture.change(.set, "Person", ann, friends, .ids([bob, bob])) == 1)
            #expect(try await fixture.children("Person", ann, "friends") == ["Bob"])
            #expect(try await fixture.change(.set, "Person", ann, friends, .ids([bob, cy])) == 2, "Bob was linked")
        }
    }

    @Test func aOneToOneRelationHoldsOneChild() async throws {
        try await EngineFixture.with { fixture in
            let ann = try await fixture.objects("Person", ["Ann"])[0]
            let homes = try await fixture.objects("Address", ["Oslo", "Rome", "Rio"])
            let address = try RelationColumnArgument("address:Address:1")
            #expect(try await fixture.change(.add, "Person", ann, address, .ids([homes[0]])) == 1)
            try await fixture.expectCode(1028) {
                try await fixture.change(.add, "Person", ann, address, .ids([homes[1]]))
            }
            #expect(try await fixture.change(.set, "Person", ann, address, .ids([homes[1]])) == 1)
            #expect(try await fixture.children("Person", ann, "address") == ["Rome"])
            try await fixture.expectCode(1028) {
                try await fixture.change(.set, "Person", ann, address, .ids([homes[0], homes[2]]))
            }
            let two = try QueryParser.condition("name LIKE 'R%'")
            try await fixture.expectCode(1028) {
                try await fixture.change(.set, "Person", ann, address, .matching(two))
            }
            // A refused change leaves the relation as it was.
            #expect(try await fixture.children("Person", ann, "address") == ["Rome"])
            #expect(try await fixture.change(.set, "Person", ann, address, .ids([homes[1]])) == 1, "set again")
            #expect(
                try await fixture.change(
                    .delete, "Person", ann, try RelationColumnArgument("address"), .ids([homes[1]])) == 1)
            #expect(try await fixture.children("Person", ann, "address") == [])
        }
    }

    @Test func errorsNameTheirCause() async throws {
        try await EngineFixture.with { fixture in
            let people = try await fixture.objects("Person", ["Ann", "Bob"])
            _ = try await fixture.create("Person", #"{"nick": "x"}"#)
            let friends = try RelationColumnArgument("friends:Person:n")
            _ = try await fixture.change(.add, "Person", people[0], friends, .ids([people[1]]))
            let cases: [(String, RelationColumnArgument, String, Int)] = [
                ("an unknown parent", friends, "NOPE", 1000),
                ("a plain column", try RelationColumnArgument("nick"), people[0], 1027),
                ("an undeclared column without a table", try RelationColumnArgument("enemies"), people[0], 1011),
                ("a child table that does not exist", try RelationColumnArgument("pets:Pet:n"), people[0], 1009),
                ("another child table", try RelationColumnArgument("friends:Address:n"), people[0], 1024),
                ("another cardinality", try RelationColumnArgument("friends:Person:1"), people[0], 1024),
            ]
            for (label, argument, parent, code) in cases {
                try await fixture.expectCode(code, label) {
                    try await fixture.change(.add, "Person", parent, argument, .ids([people[1]]))
                }
            }
            try await fixture.expectCode(1009, "an unknown parent table") {
                try await fixture.change(.add, "Nothing", people[0], friends, .ids([people[1]]))
            }
            for (text, code) in [
                ("x\"; DROP TABLE t; --", 1020), ("a:b:c:d", 1027), ("a:Person:3", 1027), ("a:1x:n", 1020),
            ] {
                do {
                    _ = try RelationColumnArgument(text)
                    Issue.record("\(text) was accepted")
                } catch let error as ErrorEnvelope {
                    #expect(error.code == code, "\(text)")
                }
            }
            let tooMany = JSONValue.array((0...RelationChildren.idLimit).map { JSONValue.string("id\($0)") })
            do {
                _ = try RelationChildren(body: tooMany)
                Issue.record("over the id limit was accepted")
            } catch let error as ErrorEnvelope {
                #expect(error.code == 1021)
            }
            for body in [#"{"a": 1}"#, #"[true]"#, #"[""]"#, #"[{"name": "x"}]"#] {
                do {
                    _ = try RelationChildren(body: try JSONParser.parse(body))
                    Issue.record("\(body) was accepted")
                } catch let error as ErrorEnvelope {
                    #expect(error.code == 1022, "\(body)")
                }
            }
            #expect(try await fixture.children("Person", people[0], "friends") == ["Bob"])
        }
    }

    @Test func deletingAParentOrAChildRemovesOnlyLinks() async throws {
        try await EngineFixture.with { fixture in
            let people = try await fixture.objects("Person", ["Ann", "Bob", "Cy"])
            let friends = try RelationColumnArgument("friends:Person:n")
            _ = try await fixture.change(.add, "Person", people[0], friends, .ids([people[1], people[2]]))
            _ = try await fixture.change(.add, "Person", people[1], friends, .ids([people[2]]))
            _ = try await fixture.engine.delete("Person", id: people[2], identity: fixture.rest, logger: fixture.logger)
            #expect(try await fixture.children("Person", people[0], "friends") == ["Bob"])
            #expect(try await fixture.children("Person", people[1], "friends") == [])
            _ = try await fixture.engine.delete("Person", id: people[0], identity: fixture.rest, logger: fixture.logger)
            #expect(try await fixture.rowCount("Person") == 1)
            #expect(try await fixture.linkCount("Person", "friends") == 0)
        }
    }

    @Test func relationColumnsInTheSchema() async throws {
        try await EngineFixture.with { fixture in
            let ann = try await fixture.objects("Person", ["Ann"])[0]
            let homes = try await fixture.objects("Address", ["Oslo"])
            _ = try await fixture.change(
                .add, "Person", ann, try RelationColumnArgument("address:Address:1"), .ids(homes))
            let properties = try #require(try await fixture.engine.properties("Person", identity: fixture.rest).array)
            let keys = [
                "name", "required", "type", "defaultValue", "relatedTable", "customRegex", "autoLoad", "isPrimaryKey",
                "expression",
            ]
            for property in properties { #expect(property.object?.members.map(\.key) == keys) }
            let address = try #require(properties.compactMap(\.object).first { $0["name"]?.string == "address" })
            #expect(address["type"] == .string("DATA_REF") && address["relatedTable"] == .string("Address"))
            #expect(address["autoLoad"] == .bool(false))
            // A plain save leaves relations alone, whatever it carries for them.
            let saved = try await fixture.engine.update(
                "Person", id: ann,
                changes: try fixture.object(#"{"address": {"___class": "Address", "name": "X"}, "age": 3}"#),
                identity: fixture.rest, logger: fixture.logger)
            #expect(try fixture.decode(saved)["address"] == nil)
            #expect(try await fixture.children("Person", ann, "address") == ["Oslo"])
            // Renaming keeps the links; auto-load is a flag; other changes are refused.
            _ = try await fixture.engine.alterColumn(
                "Person", column: "address", changes: try fixture.object(#"{"name": "home", "autoLoad": true}"#),
                identity: fixture.serverCode, logger: fixture.logger)
            #expect(try await fixture.children("Person", ann, "home") == ["Oslo"])
            // The old name is free again, and a plain column may not take a relation's name.
            #expect(
                try await fixture.change(
                    .add, "Person", ann, try RelationColumnArgument("address:Address:1"), .ids(homes)) == 1)
            try await fixture.engine.dropColumn(
                "Person", column: "address", identity: fixture.serverCode, logger: fixture.logger)
            try await fixture.expectCode(1024) {
                _ = try await fixture.engine.alterColumn(
                    "Person", column: "age", changes: try fixture.object(#"{"name": "home"}"#),
                    identity: fixture.serverCode,
                    logger: fixture.logger)
                return 0
            }
            try await fixture.expectCode(1024) {
                _ = try await fixture.engine.alterColumn(
                    "Person", column: "home", changes: try fixture.object(#"{"relatedTable": "Person"}"#),
                    identity: fixture.serverCode, logger: fixture.logger)
                return 0
            }
            // Dropping the child table drops the relation; dropping the column drops its links.
            _ = try await fixture.change(
                .add, "Person", ann, try RelationColumnArgument("friends:Person:n"), .ids([ann]))
            try await fixture.engine.dropColumn(
                "Person", column: "friends", identity: fixture.serverCode, logger: fixture.logger)
            try await fixture.engine.dropTable("Address", identity: fixture.serverCode, logger: fixture.logger)
            let remaining = try #require(try await fixture.engine.properties("Person", identity: fixture.rest).array)
            #expect(!remaining.contains { ["home", "friends"].contains($0.object?["name"]?.string ?? "") })
            #expect(try await fixture.linkTables() == 0)
        }
    }

    @Test func theSchemaAPIDeclaresRelations() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.objects("Address", ["Oslo"])
            let definition = try DataEngine.relationDefinition(
                try fixture.object(
                    #"{"name": "homes", "type": "DATA_REF", "relatedTable": "Address", "cardinality": "ONE_TO_MANY"}"#))
            _ = try await fixture.engine.addColumns(
                "Owner", columns: [], relations: [definition], identity: fixture.serverCode, logger: fixture.logger)
            let owner = try await fixture.objects("Owner", ["O"])[0]
            let address = try await fixture.objects("Address", ["Rome", "Rio"])
            #expect(
                try await fixture.change(.add, "Owner", owner, try RelationColumnArgument("homes"), .ids(address)) == 2)
            try await fixture.expectCode(1009) {
                _ = try await fixture.engine.addColumns(
                    "Owner", columns: [],
                    relations: [RelationDefinition(name: "x", relatedTable: "Nowhere", isMany: true)],
                    identity: fixture.serverCode, logger: fixture.logger)
                return 0
            }
        }
    }

    @Test func loadingPagesSortsFiltersAndProjects() async throws {
        try await EngineFixture.with { fixture in
            let ann = try await fixture.objects("Person", ["Ann"])[0]
            let items = try await fixture.objects("Item", (1...25).map { "i\($0)" })
            _ = try await fixture.change(
                .set, "Person", ann, try RelationColumnArgument("items:Item:n"), .ids(items.reversed()))
            #expect(try await fixture.children("Person", ann, "items").count == 10)
            #expect(try await fixture.children("Person", ann, "items", [("pageSize", "3")]) == ["i25", "i24", "i23"])
            #expect(
                try await fixture.children("Person", ann, "items", [("pageSize", "2"), ("offset", "24")]) == ["i1"])
            #expect(
                try await fixture.children("Person", ann, "items", [("sortBy", "name"), ("pageSize", "3")]) == [
                    "i1", "i10", "i11",
                ])
            #expect(
                try await fixture.children(
                    "Person", ann, "items", [("where", "name LIKE 'i2%'"), ("sortBy", "name desc")]
                ).count == 7)
            let projected = try await fixture.load("Person", ann, "items", [("props", "name"), ("pageSize", "1")])
            #expect(Set(projected[0].keys) == ["name", "objectId", "___class"])
            try await fixture.expectCode(1016) {
                try await fixture.load("Person", ann, "items", [("pageSize", "101")]).count
            }
            try await fixture.expectCode(1000) { try await fixture.load("Person", "nobody", "items", []).count }
        }
    }

    @Test func usersCanBeChildren() async throws {
        try await EngineFixture.with { fixture in
            let users = try await fixture.users(["u1", "u2"])
            let team = try await fixture.objects("Team", ["T"])[0]
            #expect(
                try await fixture.change(.add, "Team", team, try RelationColumnArgument("members:Users:n"), .ids(users))
                    == 2)
            #expect(try await fixture.children("Team", team, "members") == ["u1", "u2"])
        }
    }

    @Test func permissionsApplyToParentAndChildren() async throws {
        try await EngineFixture.with { fixture in
            let people = try await fixture.objects("Person", ["Ann", "Bob", "Cy"])
            let friends = try RelationColumnArgument("friends:Person:n")
            _ = try await fixture.change(.add, "Person", people[0], friends, .ids([people[1]]))
            // A child the caller may not find is neither linked nor loaded.
            try await fixture.engine.setObjectPermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)),
                table: "Person",
                objectID: people[2], identity: fixture.serverCode, logger: fixture.logger)
            #expect(try await fixture.change(.add, "Person", people[0], friends, .ids([people[2]])) == 0)
            try await fixture.engine.setObjectPermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)),
                table: "Person",
                objectID: people[1], identity: fixture.serverCode, logger: fixture.logger)
            #expect(try await fixture.children("Person", people[0], "friends") == [])
            // The parent's rights: a table rule denies adding, an object ACL denies loading one parent.
            try await fixture.engine.setRulePermission(
                PermissionChange(decision: .deny, operation: .addRelation, principal: .role(Principal.everyone)),
                table: "Person", identity: fixture.serverCode, logger: fixture.logger)
            try await fixture.expectCode(1023) {
                try await fixture.change(.add, "Person", people[0], friends, .ids([people[1]]))
            }
            try await fixture.expectCode(1023) {
                try await fixture.change(.set, "Person", people[0], friends, .ids([]))
            }
            #expect(try await fixture.change(.delete, "Person", people[0], friends, .ids([people[2]])) == 0)
            try await fixture.engine.setObjectPermission(
                PermissionChange(decision: .deny, operation: .loadRelations, principal: .role(Principal.everyone)),
                table: "Person", objectID: people[0], identity: fixture.serverCode, logger: fixture.logger)
            try await fixture.expectCode(1023) { try await fixture.load("Person", people[0], "friends", []).count }
        }
    }
}

extension EngineFixture {
    /// Creates one object per name in `table`; their ids in order.
    func objects(_ table: String, _ names: [String]) async throws -> [String] {
        var ids: [String] = []
        for name in names {
            ids.append(try #require(try await create(table, #"{"name": "\#(name)"}"#)["objectId"] as? String))
        }
        return ids
    }

    /// Creates one `Users` row per name with the server-code key (the only client key the data
    /// engine creates users for) and lets anonymous callers find users, which an app has to
    /// grant itself; their ids in order.
    func users(_ names: [String]) async throws -> [String] {
        var ids: [String] = []
        for name in names {
            ids.append(
                try #require(try await create("Users", #"{"name": "\#(name)"}"#, as: serverCode)["objectId"] as? String)
            )
        }
        try await engine.setRulePermission(
            PermissionChange(decision: .grant, operation: .find, principal: .role(SystemRoles.notAuthenticated)),
            table: "Users", identity: serverCode, logger: logger)
        return ids
    }

    func change(
        _ change: RelationChange, _ table: String, _ parent: String, _ argument: RelationColumnArgument,
        _ children: RelationChildren
    ) async throws -> Int {
        try await engine.changeRelation(
            change, table: table, parentID: parent, argument: argument, children: children, identity: rest,
            logger: logger)
    }

    func load(_ table: String, _ parent: String, _ column: String, _ parameters: [(String, String)]) async throws
        -> [[String: Any]]
    {
        let query = try FindQuery(QueryParameters(queryItems: parameters.map { (name: $0.0, value: $0.1) }))
        return try await engine.loadRelation(
            table: table, parentID: parent, argument: try RelationColumnArgument(column), query: query, identity: rest,
            logger: logger
        ).map(decode)
    }

    /// The children's names, in the order loading answers them.
    func children(_ table: String, _ parent: String, _ column: String, _ parameters: [(String, String)] = [])
        async throws
        -> [String]
    {
        try await load(table, parent, column, parameters).map { $0["name"] as? String ?? "?" }
    }

    /// Rows in a relation's link table, read with SQL.
    func linkCount(_ table: String, _ column: String) async throws -> Int {
        let schema = AppCatalog.schemaName(for: appID)
        let rows = try await database.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT link_table FROM data.columns WHERE app_id = '\(appID)' AND table_name = '\(table)' AND name = '\(column)'
                    """), logger: logger)
        var link = ""
        for try await name in rows.decode(String.self) { link = name }
        let count = try await database.query(
            PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(schema)\".\"\(link)\""), logger: logger)
        for try await value in count.decode(Int.self) { return value }
        return -1
    }

    /// How many link tables the app's schema holds.
    func linkTables() async throws -> Int {
        let schema = AppCatalog.schemaName(for: appID)
        let rows = try await database.query(
            PostgresQuery(
                unsafeSQL: "SELECT count(*) FROM pg_tables WHERE schemaname = '\(schema)' AND tablename LIKE 'rl\\_%'"),
            logger: logger)
        for try await value in rows.decode(Int.self) { return value }
        return -1
    }
}
