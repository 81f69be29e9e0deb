import DataEngine
import Foundation
import InternalProtocol
import Permissions
import QueryLanguage
import TestSupport
import Testing

/// Where clauses through relations: dotted paths at any depth, inverse paths, NOT and IS NULL,
/// counts and bulk deletes, the Find filter on related tables, and errors.
@Suite(.timeLimit(.minutes(20))) struct RelationQueryTests {
    /// Orders o0…o3: o0 and o2 belong to Cleo (address Oslo), o1 and o3 to Carl (no address);
    /// order oN has items priced N and N+10; `loose` has neither.
    private func orders(_ fixture: EngineFixture) async throws -> [String] {
        let oslo = try await fixture.objects("Address", ["Oslo"])
        let customers = try await fixture.objects("Customer", ["Cleo", "Carl"])
        _ = try await fixture.change(
            .set, "Customer", customers[0], try RelationColumnArgument("address:Address:1"), .ids(oslo))
        var ids: [String] = []
        for number in 0..<4 {
            let order = try await fixture.objects("Order", ["o\(number)"])[0]
            var items: [String] = []
            for price in [number, number + 10] {
                items.append(
                    try #require(
                        try await fixture.create("Item", #"{"name": "o\#(number)-\#(price)", "price": \#(price)}"#)[
                            "objectId"] as? String))
            }
            _ = try await fixture.change(.set, "Order", order, try RelationColumnArgument("items:Item:n"), .ids(items))
            _ = try await fixture.change(
                .set, "Order", order, try RelationColumnArgument("customer:Customer:1"), .ids([customers[number % 2]]))
            ids.append(order)
        }
        _ = try await fixture.objects("Order", ["loose"])
        return ids
    }

    private func names(_ fixture: EngineFixture, _ table: String, _ clause: String) async throws -> [String] {
        try await fixture.find(table, [("where", clause), ("sortBy", "name"), ("pageSize", "100")]).map {
            $0["name"] as? String ?? "?"
        }
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
                "Order",
                query: try FindQuery(
                    QueryParameters(queryItems: [(name: "where", value: "items.price >= 10")]), paged: false),
                identity: fixture.rest, logger: fixture.logger)
            #expect(count == 4)
            let deleted = try await fixture.engine.deleteBulk(
                "Item", condition: try QueryParser.condition("Order[items].name = 'o0'"), identity: fixture.rest,
                logger: fixture.logger)
            #expect(deleted == 2)
            #expect(try await names(fixture, "Order", "items.price >= 0") == ["o1", "o2", "o3"])
        }
    }

    @Test func usersAreReachableByInversePaths() async throws {
        try await EngineFixture.with { fixture in
            let users = try await fixture.users(["u1", "u2"])
            let team = try await fixture.objects("Team", ["T"])[0]
            _ = try await fixture.change(
                .add, "Team", team, try RelationColumnArgument("members:Users:n"), .ids([users[1]]))
            #expect(try await names(fixture, "Users", "Team[members].name = 'T'") == ["u2"])
        }
    }

    @Test func relatedObjectsTheCallerMayNotFindDoNotMatch() async throws {
        try await EngineFixture.with { fixture in
            _ = try await orders(fixture)
            try await fixture.engine.setRulePermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)),
                table: "Address",
                identity: fixture.serverCode, logger: fixture.logger)
            #expect(try await names(fixture, "Order", "customer.address.name = 'Oslo'") == [])
            let hidden = try #require(
                try await fixture.find("Item", [("where", "price = 12")]).first?["objectId"] as? String)
            try await fixture.engine.setObjectPermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)),
                table: "Item",
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

/// Related columns outside where clauses: props, sorting on 1:1 paths, grouping and aggregates.
@Suite(.timeLimit(.minutes(20))) struct RelationProjectionTests {
    /// People with homes (1:1 Address with a city) and pets (1:N Pet with an age).
    private func people(_ fixture: EngineFixture) async throws {
        let cities = ["Oslo", "Rome", "Oslo"]
        _ = try await fixture.engine.addColumns(
            "Pet", columns: [ColumnSchema(name: "age", type: .int)], identity: fixture.serverCode,
            logger: fixture.logger)
        for (index, name) in ["Ann", "Bob", "Cy", "Di"].enumerated() {
            let person = try await fixture.objects("Person", [name])[0]
            if index < cities.count {
                let home = try #require(
                    try await fixture.create("Address", #"{"city": "\#(cities[index])"}"#)["objectId"] as? String)
                _ = try await fixture.change(
                    .set, "Person", person, try RelationColumnArgument("home:Address:1"), .ids([home]))
            }
            var pets: [String] = []
            for age in 0..<index {
                pets.append(
                    try #require(try await fixture.create("Pet", #"{"age": \#(age + 1)}"#)["objectId"] as? String))
            }
            _ = try await fixture.change(.set, "Person", person, try RelationColumnArgument("pets:Pet:n"), .ids(pets))
        }
    }

    @Test func relatedColumnsInPropsSortAndGroups() async throws {
        try await EngineFixture.with { fixture in
            try await people(fixture)
            let projected = try await fixture.find(
                "Person", [("props", "name,home.city"), ("sortBy", "home.city desc, name")])
            // Nulls sort as PostgreSQL sorts them: first when descending.
            #expect(projected.map { $0["name"] as? String } == ["Di", "Bob", "Ann", "Cy"])
            #expect(projected.map { $0["city"] as? String } == [nil, "Rome", "Oslo", "Oslo"])
            #expect(projected[0]["city"] is NSNull)
            let aliased = try await fixture.find("Person", [("props", "home.city as town"), ("where", "name = 'Bob'")])
            #expect(aliased.first?["town"] as? String == "Rome")

            let grouped = try await fixture.find(
                "Person",
                [("props", "Count(objectId) as people,home.city"), ("groupBy", "home.city"), ("sortBy", "home.city")])
            #expect(grouped.map { $0["city"] as? String } == ["Oslo", "Rome", nil])
            #expect(grouped.map { $0["people"] as? Int } == [2, 1, 1])

            let pets = try await fixture.find(
                "Person",
                [
                    ("props", "name,Count(pets) as petCount,Sum(pets.age) as ages"), ("groupBy", "name"),
                    ("sortBy", "name"),
                ])
            #expect(pets.map { $0["petCount"] as? Int } == [0, 1, 2, 3])
            #expect(pets.map { ($0["ages"] as? Double).map(Int.init) } == [nil, 1, 3, 6])
            let having = try await fixture.find(
                "Person",
                [
                    ("props", "name,Count(pets) as petCount"), ("groupBy", "name"), ("having", "Count(pets) > 1"),
                    ("sortBy", "name"),
                ])
            #expect(having.map { $0["name"] as? String } == ["Cy", "Di"])
            let groups = try await fixture.engine.count(
                "Person",
                query: try FindQuery(
                    QueryParameters(queryItems: [(name: "groupBy", value: "home.city")]), paged: false),
                identity: fixture.rest, logger: fixture.logger)
            #expect(groups == 3)
        }
    }

    @Test func pathsThatWouldMultiplyRowsOrNameNothingAreRefused() async throws {
        try await EngineFixture.with { fixture in
            try await people(fixture)
            let cases: [([(String, String)], Int)] = [
                ([("props", "pets.age")], 1017), ([("sortBy", "pets.age")], 1017), ([("groupBy", "pets.age")], 1017),
                ([("props", "home.nope")], 1011), ([("props", "nope.city")], 1011), ([("sortBy", "name.x")], 1027),
                ([("props", "Person[home].name")], 1019),
            ]
            for (parameters, code) in cases {
                try await fixture.expectCode(code, "\(parameters)") {
                    try await fixture.find("Person", parameters).count
                }
            }
        }
    }

    @Test func aggregatesThatARowMultiplyingJoinWouldInflateAreRefused() async throws {
        try await EngineFixture.with { fixture in
            try await people(fixture)
            try await fixture.expectCode(1019) {
                try await fixture.find("Person", [("props", "Count(objectId),Count(pets)"), ("groupBy", "name")]).count
            }
            let withOneToOne = try await fixture.find(
                "Person",
                [("props", "name,Count(pets) as n,home.city"), ("groupBy", "name,home.city"), ("sortBy", "name")])
            #expect(withOneToOne.map { $0["n"] as? Int } == [0, 1, 2, 3])
        }
    }

    @Test func aParentsLoadRelationsRuleCoversPathsToo() async throws {
        try await EngineFixture.with { fixture in
            try await people(fixture)
            try await fixture.engine.setRulePermission(
                PermissionChange(decision: .deny, operation: .loadRelations, principal: .role(Principal.everyone)),
                table: "Person", identity: fixture.serverCode, logger: fixture.logger)
            #expect(try await fixture.find("Person", [("where", "home.city = 'Oslo'")]).isEmpty)
            let projected = try await fixture.find("Person", [("props", "name,home.city")])
            #expect(projected.count == 4 && projected.allSatisfy { $0["city"] is NSNull })
            #expect(try await fixture.find("Address", [("where", "Person[home].name = 'Ann'")]).isEmpty)
        }
    }

    @Test func hiddenRelatedObjectsContributeNothing() async throws {
        try await EngineFixture.with { fixture in
            try await people(fixture)
            try await fixture.engine.setRulePermission(
                PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)),
                table: "Address",
                identity: fixture.serverCode, logger: fixture.logger)
            let projected = try await fixture.find("Person", [("props", "name,home.city"), ("sortBy", "name")])
            #expect(projected.count == 4 && projected.allSatisfy { $0["city"] is NSNull })
        }
    }
}
