import DataEngine
import Foundation
import InternalProtocol
import Permissions
import TestSupport
import Testing

/// Finds that load related objects: `loadRelations` paths, `relationsDepth`, `relationsPageSize`,
/// auto-load columns, the shape of what comes back, and a statement count independent of the
/// number of objects.
@Suite(.timeLimit(.minutes(20))) struct RelationLoadingTests {
    /// Orders, each with `lines` items (1:N) and a customer (1:1) who has an address (1:1).
    private func shop(_ fixture: EngineFixture, orders: Int, lines: Int = 12) async throws -> [String] {
        let address = try await fixture.objects("Address", ["Oslo"])
        let customers = try await fixture.objects("Customer", ["Cleo", "Carl"])
        _ = try await fixture.change(
            .set, "Customer", customers[0], try RelationColumnArgument("address:Address:1"), .ids(address))
        var orderIDs: [String] = []
        for number in 0..<orders {
            let order = try await fixture.objects("Order", ["o\(number)"])[0]
            let items = try await fixture.objects("Item", (0..<lines).map { "o\(number)-i\($0)" })
            _ = try await fixture.change(.set, "Order", order, try RelationColumnArgument("items:Item:n"), .ids(items))
            let customer = try RelationColumnArgument("customer:Customer:1")
            _ = try await fixture.change(.set, "Order", order, customer, .ids([customers[number % 2]]))
            orderIDs.append(order)
        }
        return orderIDs
    }

    @Test func relationsComeAsAskedAndOnlyThen() async throws {
        try await EngineFixture.with { fixture in
            _ = try await shop(fixture, orders: 2)
            let empty = try await fixture.objects("Order", ["bare"])[0]
            let sorted = [("sortBy", "name")]
            let plain = try await fixture.find("Order", sorted)
            #expect(plain.allSatisfy { $0["items"] == nil && $0["customer"] == nil })

            let items = try await fixture.find("Order", sorted + [("loadRelations", "items")])
            #expect(items[1]["customer"] == nil)
            #expect(
                (items[1]["items"] as? [[String: Any]])?.map { $0["name"] as? String } == (0..<10).map { "o0-i\($0)" })
            #expect((items[1]["items"] as? [[String: Any]])?.first?["___class"] as? String == "Item")
            #expect((items[0]["items"] as? [Any])?.isEmpty == true)

            let deep = try await fixture.find("Order", sorted + [("loadRelations", "customer.address")])
            let cleo = try #require(deep[1]["customer"] as? [String: Any])
            #expect(
                cleo["name"] as? String == "Cleo" && (cleo["address"] as? [String: Any])?["name"] as? String == "Oslo")
            let carl = try #require(deep[2]["customer"] as? [String: Any])
            #expect(carl["address"] is NSNull)
            #expect(deep[0]["customer"] is NSNull && deep[0]["items"] == nil)

            let byDepth = try await fixture.find(
                "Order", sorted + [("relationsDepth", "2"), ("relationsPageSize", "3")])
            #expect((byDepth[1]["items"] as? [Any])?.count == 3)
            #expect(
                ((byDepth[1]["customer"] as? [String: Any])?["address"] as? [String: Any])?["name"] as? String == "Oslo"
            )
            let shallow = try await fixture.find("Order", sorted + [("relationsDepth", "1")])
            #expect((shallow[1]["customer"] as? [String: Any])?["address"] == nil)
            let star = try await fixture.find("Order", sorted + [("loadRelations", "*")])
            #expect(star[1]["items"] != nil && star[1]["customer"] != nil)

            let single = try fixture.decode(
                try await fixture.engine.object(
                    "Order", id: empty,
                    query: try FindQuery(
                        QueryParameters(queryItems: [(name: "loadRelations", value: "items,customer")]), paged: false),
                    identity: fixture.rest, logger: fixture.logger))
            #expect((single["items"] as? [Any])?.isEmpty == true && single["customer"] is NSNull)
        }
    }

    @Test func autoLoadColumnsComeWithEveryFind() async throws {
        try await EngineFixture.with { fixture in
            _ = try await shop(fixture, orders: 1)
            _ = try await fixture.engine.alterColumn(
                "Order", column: "customer", changes: try fixture.object(#"{"autoLoad": true}"#),
                identity: fixture.serverCode, logger: fixture.logger)
            let found = try await fixture.find("Order", [])
            #expect((found[0]["customer"] as? [String: Any])?["name"] as? String == "Cleo")
            #expect(found[0]["items"] == nil)
            let first = try await fixture.engine.edge(
                "Order", last: false, query: FindQuery(), identity: fixture.rest, logger: fixture.logger)
            #expect(try fixture.decode(try #require(first))["customer"] is [String: Any])
        }
    }

    @Test func loadingCostsStatementsPerLevelNotPerObject() async throws {
        try await EngineFixture.with { fixture in
            _ = try await shop(fixture, orders: 20, lines: 3)
            let query = [("relationsDepth", "2"), ("pageSize", "100")]
            func statements(pageSize: String) async throws -> Int {
                _ = try await fixture.find("Order", query)  // warms the catalog cache
                let before = fixture.engine.statements.value
                let found = try await fixture.find("Order", [("relationsDepth", "2"), ("pageSize", pageSize)])
                #expect(found.count == Int(pageSize))
                return fixture.engine.statements.value - before
            }
            let few = try await statements(pageSize: "2")
            let many = try await statements(pageSize: "20")
            // The find, then items and customer, then the customer's address.
            #expect(few == 4 && many == 4)
        }
    }

    @Test func cyclesStopAtTheDepth() async throws {
        try await EngineFixture.with { fixture in
            let people = try await fixture.objects("Person", ["Ann", "Bob"])
            let friends = try RelationColumnArgument("friends:Person:n")
            _ = try await fixture.change(.set, "Person", people[0], friends, .ids([people[1]]))
            _ = try await fixture.change(.set, "Person", people[1], friends, .ids([people[0]]))
            let found = try await fixture.find("Person", [("sortBy", "name"), ("relationsDepth", "3")])
            var level: [String: Any]? = found[0]
            var names: [String] = []
            while let current = level {
                names.append(current["name"] as? String ?? "?")
                level = (current["friends"] as? [[String: Any]])?.first
            }
            #expect(names == ["Ann", "Bob", "Ann", "Bob"])
        }
    }

    @Test func sharedChildrenCannotNestIntoAHugeAnswer() async throws {
        try await EngineFixture.with { fixture in
            let nodes = try await fixture.objects("Node", ["a", "b", "c", "d", "e"])
            for node in nodes {
                _ = try await fixture.change(.set, "Node", node, try RelationColumnArgument("kids:Node:n"), .ids(nodes))
            }
            // 25 links a level, but every node under every node: 5^11 objects at depth 10.
            try await fixture.expectCode(1018) {
                try await fixture.find(
                    "Node", [("pageSize", "5"), ("relationsDepth", "10"), ("relationsPageSize", "10")]
                ).count
            }
            let shallow = try await fixture.find("Node", [("pageSize", "5"), ("relationsDepth", "2")])
            #expect(shallow.count == 5 && shallow.allSatisfy { ($0["kids"] as? [[String: Any]])?.count == 5 })
        }
    }

    @Test func limitsAndBadPathsAreRefused() async throws {
        try await EngineFixture.with { fixture in
            _ = try await shop(fixture, orders: 1)
            let cases: [([(String, String)], Int)] = [
                ([("relationsDepth", "11")], 1016), ([("relationsPageSize", "0")], 1016),
                ([("relationsPageSize", "101")], 1016),
                ([("loadRelations", "nope")], 1011), ([("loadRelations", "name")], 1027),
                ([("loadRelations", "customer.nope")], 1011),
                ([("loadRelations", "x;drop")], 1020),
                ([("loadRelations", Array(repeating: "a", count: 12).joined(separator: "."))], 1018),
            ]
            for (parameters, code) in cases {
                try await fixture.expectCode(code, "\(parameters)") {
                    try await fixture.find("Order", parameters).count
                }
            }
        }
    }

    @Test func childrenTheCallerMayNotFindAreLeftOut() async throws {
        try await EngineFixture.with { fixture in
            let orders = try await shop(fixture, orders: 1, lines: 3)
            let items = try await fixture.children("Order", orders[0], "items")
            let hidden = try #require(
                try await fixture.load("Order", orders[0], "items", [("where", "name = '\(items[1])'")]).first?[
                    "objectId"] as? String)
            try await fixture.engine.setObjectPermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)),
                table: "Item",
                objectID: hidden, identity: fixture.serverCode, logger: fixture.logger)
            let found = try await fixture.find("Order", [("loadRelations", "items")])
            #expect((found[0]["items"] as? [[String: Any]])?.map { $0["name"] as? String } == [items[0], items[2]])
            try await fixture.engine.setRulePermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)),
                table: "Customer",
                identity: fixture.serverCode, logger: fixture.logger)
            let withoutCustomers = try await fixture.find("Order", [("loadRelations", "customer")])
            #expect(withoutCustomers[0]["customer"] is NSNull)
        }
    }

    @Test func aUnitOfWorkFindReadsQueryOptions() async throws {
        try await EngineFixture.with { fixture in
            _ = try await shop(fixture, orders: 3, lines: 2)
            let work = try UnitOfWork(
                body: try JSONParser.parse(
                    #"""
                    {"operations": [{"operationType": "FIND", "table": "Order", "opResultId": "orders", "payload": {
                      "pageSize": 10, "queryOptions": {"sortBy": ["name DESC"], "related": ["items"], "relationsPageSize": 1,
                      "properties": ["name"]}}}]}
                    """#))
            let answer = try await fixture.engine.execute(work, identity: fixture.rest, logger: fixture.logger)
            let result = try fixture.decode(answer.jsonText)
            let rows = try #require(
                ((result["results"] as? [String: Any])?["orders"] as? [String: Any])?["result"] as? [[String: Any]])
            #expect(rows.map { $0["name"] as? String } == ["o2", "o1", "o0"])
            #expect(rows.allSatisfy { ($0["items"] as? [Any])?.count == 1 && $0["customer"] == nil })
        }
    }
}
