import DataEngine
import Foundation
import InternalProtocol
import NIOHTTP1
import Permissions
import TestSupport
import Testing

@testable import GeoService

/// Geo categories as permission containers (issue 15 item 7): random FIND cells on categories,
/// the global matrix and owner policies; every search must find exactly the points the nine-layer
/// oracle lets each caller find, and ADD / REMOVE guard the writes.
@Suite(.timeLimit(.minutes(20))) struct GeoPermissionTests {
    static let categories = ["A", "B", "C", "D"]

    @Test func searchesFindExactlyWhatTheOracleAllows() async throws {
        let seed = SeededGenerator.seed
        var random = SeededGenerator(seed: seed)
        let points = (0..<30).map { _ in
            (
                categories: Array(
                    Self.categories.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random))),
                owner: Int.random(in: 0...2, using: &random)
            )
        }
        let rounds = (0..<6).map { _ in (0..<70).map { _ in Int.random(in: 0...5, using: &random) } }
        let searches = (0..<12).map { _ in
            Array(Self.categories.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random)))
        }
        try await TestCluster.shared { cluster async throws in
            let people = try await PermissionPeople(cluster)
            let (bob, ann) = (people.bob, people.ann)
            var saved: [(id: String, categories: [String], owner: String?)] = []
            for (index, point) in points.enumerated() {
                let owner = [nil, bob, ann][point.owner]
                let names = point.categories.map { "\"\($0)\"" }.joined(separator: ",")
                let body = #"{"latitude": \#(Double(index) / 10), "longitude": 1, "categories": [\#(names)]}"#
                let answer = try await cluster.send(.POST, "/geo/points", body, token: owner?.token)
                let id = try #require(
                    (answer.json["geopoint"] as? [String: Any])?["objectId"] as? String, "\(answer.text)")
                saved.append((id, point.categories, owner?.id))
            }
            let containers = ["*"] + Self.categories
            let principals = people.principals
            let callers = people.callers
            for draws in rounds {
                var rules = CategoryRules()
                var draw = draws.makeIterator()
                for container in containers {
                    let key = container == "*" ? "" : container.lowercased()
                    for (kind, value, principal) in principals where !(container == "*" && kind == "user") {
                        // User cells (layer 3) decide before the owner policy: mostly unset, so it gets its say.
                        let choices: [PermissionDecision?] =
                            kind == "user"
                            ? [nil, nil, nil, nil, .grant, .deny] : [nil, nil, .grant, .grant, .deny, .deny]
                        let decision = choices[draw.next() ?? 0]
                        try await cluster.setCategoryCell(container, #""\#(kind)": "\#(value)""#, decision)
                        if key.isEmpty {
                            rules.rules.global.set(principal, .find, decision)
                        } else {
                            rules.rules.containers[key, default: PermissionMatrix()].set(principal, .find, decision)
                        }
                    }
                    guard container != "*" else { continue }
                    let decision = ([nil, .grant, .grant, .grant, .deny, .deny] as [PermissionDecision?])[
                        draw.next() ?? 0]
                    try await cluster.setCategoryCell(container, nil, decision)
                    rules.rules.owner[key, default: [:]][.find] = decision
                }
                for (token, caller) in callers {
                    for requested in searches {
                        let expected = Set(
                            saved.filter { point in
                                point.categories.contains {
                                    requested.contains($0)
                                        && rules.allows(caller, .find, category: $0, ownerID: point.owner)
                                }
                            }.map(\.id))
                        let (others, own) = rules.findable(by: caller, in: requested)
                        let answer = try await cluster.send(
                            .GET, "/geo/points?pagesize=1000&categories=" + requested.joined(separator: ","),
                            token: token)
                        if others.isEmpty && own.isEmpty {
                            #expect(
                                answer.status == 403 && answer.json["code"] as? Int == 4000,
                                "seed \(seed): \(answer.text)")
                        } else {
                            #expect(
                                Set(answer.items.compactMap { $0["objectId"] as? String }) == expected,
                                "seed \(seed) \(requested)")
                        }
                    }
                }
            }
        }
    }

    @Test func addAndRemoveGuardWrites() async throws {
        try await TestCluster.shared { cluster async throws in
            let bob = try await cluster.account("bob@example.com")
            let others = try await cluster.savePoint(1, 1, categories: ["Home"])
            let bobs = try await cluster.send(
                .POST, "/geo/points", #"{"latitude": 2, "longitude": 2, "categories": ["Home"]}"#, token: bob.token)
            let bobsID = try #require((bobs.json["geopoint"] as? [String: Any])?["objectId"] as? String)
            let bobs2 = try await cluster.send(
                .POST, "/geo/points", #"{"latitude": 2.5, "longitude": 2, "categories": ["Home"]}"#, token: bob.token)
            let bobs2ID = try #require((bobs2.json["geopoint"] as? [String: Any])?["objectId"] as? String)
            try await cluster.setCategoryCell("Secret", #""role": "AuthenticatedUser""#, .deny, operation: "ADD")
            try await cluster.setCategoryCell("Home", #""role": "*""#, .deny, operation: "REMOVE")
            try await cluster.setCategoryCell("Home", nil, .grant, operation: "REMOVE")

            let refused: [(HTTPMethod, String, String?)] = [
                (.POST, "/geo/points", #"{"latitude": 3, "longitude": 3, "categories": ["Secret"]}"#),
                (.PATCH, "/geo/points/\(bobsID)", #"{"categories": ["Secret", "Home"]}"#),
                (.PATCH, "/geo/points/\(others)", #"{"categories": ["Work"]}"#),
                (.DELETE, "/geo/points/\(others)", nil),
                (.DELETE, "/geo/categories/Home", nil),
                (.PUT, "/geo/categories/Secret", nil),
                (.PUT, "/geo/categories/Home/permissions/GRANT", #"{"permission": "FIND"}"#),
            ]
            for (method, path, body) in refused {
                let answer = try await cluster.send(method, path, body, token: bob.token)
                #expect(
                    answer.status == 403 && answer.json["code"] as? Int == 4000, "\(method) \(path): \(answer.text)")
            }
            // The refusals changed nothing; the owner policy lets Bob remove his own point.
            let count = try await cluster.send(.GET, "/geo/count?categories=Home,Secret,Work")
            #expect(count.text == "3", "\(count.text)")
            #expect(
                try await cluster.send(
                    .POST, "/geo/points", #"{"latitude": 3, "longitude": 3, "categories": ["Secret"]}"#
                ).status == 200)
            #expect(try await cluster.send(.DELETE, "/geo/points/\(bobsID)", token: bob.token).status == 200)
            // A user cell (layer 3) beats the owner policy: Bob may not find his other Home point,
            // so he may neither read, change nor delete it (answered as if it did not exist).
            try await cluster.setCategoryCell("Home", #""user": "\#(bob.id)""#, .deny, operation: "FIND")
            let hidden: [(HTTPMethod, String, String?)] = [
                (.GET, "/geo/points/\(bobs2ID)/metadata", nil),
                (.PATCH, "/geo/points/\(bobs2ID)", #"{"metadata": {"x": 1}}"#),
                (.DELETE, "/geo/points/\(bobs2ID)", nil),
            ]
            for (method, path, body) in hidden {
                let answer = try await cluster.send(method, path, body, token: bob.token)
                #expect(
                    answer.status == 404 && answer.json["code"] as? Int == 4008, "\(method) \(path): \(answer.text)")
            }
            #expect(try await cluster.send(.GET, "/geo/points?categories=Home", token: bob.token).status == 403)
            let rules = try await cluster.send(.GET, "/geo/categories/Home/permissions", key: .serverCode)
            #expect(
                rules.text
                    == #"{"permissions":[{"role":"*","permission":"REMOVE","access":"DENY"},{"user":"\#(bob.id)","permission":"FIND","access":"DENY"}],"owner":[{"permission":"REMOVE","access":"GRANT"}]}"#,
                "\(rules.text)")
            let badBodies = [#"{"permission": "FLY"}"#, "[]", "{"]
            for body in badBodies {
                let answer = try await cluster.send(
                    .PUT, "/geo/categories/Home/permissions/GRANT", body, key: .serverCode)
                #expect(answer.status == 400 && answer.json["code"] as? Int == 4002, "\(body): \(answer.text)")
            }
            let badAction = try await cluster.send(
                .PUT, "/geo/categories/Home/permissions/MAYBE", #"{"permission": "FIND"}"#, key: .serverCode)
            #expect(badAction.status == 400 && badAction.json["code"] as? Int == 4002)
            // The global matrix names roles only, as data's does.
            for path in ["/geo/categories/*/permissions/DENY", "/geo/categories/*/permissions/owner/DENY"] {
                let global = try await cluster.send(
                    .PUT, path, #"{"permission": "FIND", "user": "\#(bob.id)"}"#, key: .serverCode)
                #expect(global.status == 400 && global.json["code"] as? Int == 4002, "\(path): \(global.text)")
            }
            // Changing a point in place writes to its categories: ADD on them.
            let locked = try await cluster.savePoint(4, 4, categories: ["Locked"])
            try await cluster.setCategoryCell("Locked", #""role": "AuthenticatedUser""#, .deny, operation: "ADD")
            let edit = try await cluster.send(
                .PATCH, "/geo/points/\(locked)", #"{"metadata": {"x": 1}}"#, token: bob.token)
            #expect(edit.status == 403 && edit.json["code"] as? Int == 4000, "\(edit.text)")
            #expect(try await cluster.send(.PATCH, "/geo/points/\(locked)", #"{"metadata": {"x": 1}}"#).status == 200)
        }
    }
}

extension TestCluster {
    /// Sets (nil: clears) one cell of a category's permissions; `principal` nil is the owner policy.
    func setCategoryCell(
        _ category: String, _ principal: String?, _ decision: PermissionDecision?, operation: String = "FIND"
    )
        async throws
    {
        let action = decision?.rawValue ?? "INHERIT"
        let path = "/geo/categories/\(category)/permissions/" + (principal == nil ? "owner/" : "") + action
        let body = #"{"permission": "\#(operation)""# + (principal.map { ", " + $0 } ?? "") + "}"
        let answer = try await send(.PUT, path, body, key: .serverCode)
        guard answer.status == 200 else {
            throw GeoTestFailure(description: "\(path): \(answer.status) \(answer.text)")
        }
    }
}

/// A write guarded by the categories its permission check saw changes nothing once they changed.
@Suite struct GeoGuardedWriteTests {
    @Test func staleCategoriesStopUpdatesAndDeletes() async throws {
        try await GeoFixture.with { fixture in
            let point = try await fixture.store.insert(
                app: fixture.app, GeoStore.Change(coordinate: Coordinate(latitude: 1, longitude: 1), categories: ["A"]),
                owner: nil)
            _ = try await fixture.store.update(app: fixture.app, id: point.objectId, GeoStore.Change(categories: ["B"]))
            await #expect(throws: ErrorEnvelope.self) {
                try await fixture.store.update(
                    app: fixture.app, id: point.objectId, GeoStore.Change(metadata: JSONObject([("x", .integer(1))])),
                    checked: ["A"])
            }
            #expect(try await fixture.store.delete(app: fixture.app, id: point.objectId, checked: ["A"]) == false)
            let kept = try await fixture.store.point(app: fixture.app, id: point.objectId)
            #expect(kept?.categories == ["B"] && kept?.metadata == JSONObject())
            #expect(try await fixture.store.delete(app: fixture.app, id: point.objectId, checked: ["B"]))
        }
    }
}
