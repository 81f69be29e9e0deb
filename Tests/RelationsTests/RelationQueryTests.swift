import DataEngine
import Foundation
import InternalProtocol
import Permissions
import QueryLanguage
import Testing
import TestSupport

/// Where clauses through relations: dotted paths at any depth, inverse paths, NOT and IS NULL,
/// counts and bulk deletes, the Find filter on related tables, and errors.
@Suite(.timeLimit(.minutes(5))) struct RelationQueryTests {
    /// Orders o0…o3: o0 and o2 belong to Cleo (address Oslo), o1 and o3 to Carl (no address);
    /// order oN has items priced N and N+10; `loose` has neither.
    private func orders(_ fixture: EngineFixture) async throws -> [String] {
        let oslo = try await fixture.objects("Address", ["Oslo"])
        let customers = try await fixture.objects("Customer", ["Cleo", "Carl"])
        _ = try await fixture.change(.set, "Customer", customers[0], try RelationColumnArgument("address:Address:1"), .ids(oslo))
        var ids: [String] = []
        for number in 0..<4 {
            let order = try await fixture.objects("Order", ["o\(number)"])[0]
            var items: [String] = []
            for price in [number, number + 10] {
                items.append(try #require(try await fixture.create("Item", #"{"name": "o\#(number)-\#(price)", "price": \#(price)}"#)["objectId"] as? String))
            }
            _ = try await fixture.change(.set, "Order", order, try RelationColumnArgument("items:Item:n"), .ids(items))
            _ = try await fixture.change(.set, "Order", order, try RelationColumnArgument("customer:Customer:1"), .ids([customers[number % 2]]))
            ids.append(order)
        }
        _ = try await fixture.objects("Order", ["loose"])
        return ids
    }

    private func names(_ fixture: EngineFixture, _ table: String, _ clause: String) async throws -> [String] {
        try await fixture.find(table, [("where", clause), ("sortBy", "name"), ("pageSize", "100")]).map { $0["name"] as? String ?? "?" }
    }

    @Test func pathsAtAnyDepthAndInverse() async throws {
        try await EngineFixture.with { fixture in
            _ = try await orders(fixture)
            let cases: [(String, String, [String])] = [
                ("Order", "customer.name = 'Cleo'", ["o0", "o2"]),
                ("Order", "items.price > 11", ["o2", "o3"]),
                ("Order", "items.price = 1 OR customer.name = 'Cleo'", ["o0", "o1", "o2"]),
                ("Order", "customer.address.name = 'Oslo'", ["o0", "o2"]),
                ("Order", "NOT (customer.address.name = 'Oslo')", ["loose", "o1", "o3"]),
                ("Order", "customer.address.name IS NULL", ["loose", "o1", "o3"]),
                ("Order", "customer.address.name IS NOT NULL", ["o0", "o2"]),
                ("Order", "items.name LIKE 'o3%' AND items.price IN (3, 4)", ["o3"]),
                ("Order", "items.price BETWEEN 12 AND 13", ["o2", "o3"]),
                ("Item", "Order[items].name = 'o1'", ["o1-1", "o1-11"]),
                ("Item", "Order[items].customer.name = 'Carl' AND price < 5", ["o1-1", "o3-3"]),
                ("Customer", "Order[customer].items.price = 12", ["Cleo"]),
                ("Address", "Customer[address].name = 'Cleo'", ["Oslo"]),
            ]
            for (table, clause, expected) in cases {
                #expect(try await names(fixture, table, clause) == expected, "\(table): \(clause)")
            }
            let count = try await fixture.engine.count(
                "Order", query: try FindQuery(QueryParameters(queryItems: [(name: "where", value: "items.price >= 10")]), paged: false),
                identity: fixture.rest, logger: fixture.logger)
            #expect(count == 4)
            let deleted = try await fixture.engine.deleteBulk(
                "Item", condition: try QueryParser.condition("Order[items].name = 'o0'"), identity: fixture.rest, logger: fixture.logger)
            #expect(deleted == 2)
            #expect(try await names(fixture, "Order", "items.price >= 0") == ["o1", "o2", "o3"])
        }
    }

    @Test func usersAreReachableByInversePaths() async throws {
        try await EngineFixture.with { fixture in
            let users = try await fixture.objects("Users", ["u1", "u2"])
            let team = try await fixture.objects("Team", ["T"])[0]
            _ = try await fixture.change(.add, "Team", team, try RelationColumnArgument("members:Users:n"), .ids([users[1]]))
            #expect(try await names(fixture, "Users", "Team[members].name = 'T'") == ["u2"])
        }
    }

    @Test func relatedObjectsTheCallerMayNotFindDoNotMatch() async throws {
        try await EngineFixture.with { fixture in
            _ = try await orders(fixture)
            try await fixture.engine.setRulePermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)), table: "Address",
                identity: fixture.serverCode, logger: fixture.logger)
            #expect(try await names(fixture, "Order", "customer.address.name = 'Oslo'") == [])
            let hidden = try #require(try await fixture.find("Item", [("where", "price = 12")]).first?["objectId"] as? String)
            try await fixture.engine.setObjectPermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)), table: "Item",
                objectID: hidden, identity: fixture.serverCode, logger: fixture.logger)
            #expect(try await names(fixture, "Order", "items.price > 11") == ["o3"])
        }
    }

    @Test func malformedPathsAreRefused() async throws {
        try await EngineFixture.with { fixture in
            _ = try await orders(fixture)
            let cases: [(String, String, Int)] = [
                ("Order", "nope.name = 'x'", 1011),
                ("Order", "name.x = 'x'", 1027),
                ("Order", "customer.address = 'x'", 1017),
                ("Order", "customer.nope = 'x'", 1011),
                ("Order", "items.price > total", 1019),
                ("Order", "items.price > customer.name", 1019),
                ("Item", "Customer[address].name = 'x'", 1017),
                ("Item", "Nothing[items].name = 'x'", 1009),
                ("Item", "Order[name].name = 'x'", 1027),
                ("Order", "items.price = 'cheap'", 1017),
            ]
            for (table, clause, code) in cases {
                try await fixture.expectCode(code, clause) { try await fixture.find(table, [("where", clause)]).count }
            }
        }
    }
}
