import DataEngine
import Foundation
import InternalProtocol
import Permissions
import PropertyBased
import QueryLanguage
import TestSupport
import Testing

/// Relations against oracles, property-based: random sequences of set/add/delete (by ids or by a
/// where clause, on a 1:N and a 1:1 relation) must count, link and load exactly as an in-memory
/// model says, and where clauses through the relations must match the model; children loaded
/// for a caller must be exactly those ``PermissionOracle`` lets it find. Failures print the
/// shrunk steps or facts and a seed.
@Suite(.timeLimit(.minutes(20))) struct RelationPropertyTests {
    /// One relation change of a random sequence.
    struct Step: Sendable, CustomStringConvertible {
        let many: Bool
        let change: RelationChange
        let parent: Int
        let children: [Int]
        let byWhere: Bool

        var description: String {
            "\(change.rawValue) \(many ? "friends" : "best") of \(parent) \(byWhere ? "where v in" : "ids") \(children)"
        }

        static let nodes = 6
        static let generator = zip(
            Gen.bool, Gen.int(in: 0...2), Gen.int(in: 0...(nodes - 1)), Gen.int(in: 0...(nodes - 1)).array(of: 0...3),
            Gen.bool
        ).map { parts in
            Step(
                many: parts.0, change: [.set, .add, .delete][parts.1], parent: parts.2, children: parts.3,
                byWhere: parts.4)
        }
    }

    /// What a step answers: a count, or an error code.
    enum Outcome: Equatable {
        case success(Int)
        case failure(Int)
    }

    /// The in-memory model: each node's friends in link order and its best friend.
    struct Model {
        var friends = Array(repeating: [Int](), count: Step.nodes)
        var best = [Int?](repeating: nil, count: Step.nodes)
        /// Node indices in creation order (`created`, then `objectId`), the order a where clause links in.
        let creationOrder: [Int]

        /// The count the step answers, or the error code it fails with (the model unchanged).
        mutating func apply(_ step: Step) -> Outcome {
            var selection: [Int] = []
            for child in step.byWhere ? creationOrder.filter(step.children.contains) : step.children
            where !selection.contains(child) {
                selection.append(child)
            }
            let parent = step.parent
            if step.many {
                let old = friends[parent]
                switch step.change {
                case .add:
                    let new = selection.filter { !old.contains($0) }
                    friends[parent] += new
                    return .success(new.count)
                case .set:
                    let new = selection.filter { !old.contains($0) }
                    friends[parent] = old.filter(selection.contains) + new
                    // A set answers the children it leaves, those linked before included.
                    return .success(friends[parent].count)
                case .delete:
                    friends[parent] = old.filter { !selection.contains($0) }
                    return .success(old.count - friends[parent].count)
                }
            }
            let old = best[parent]
            switch step.change {
            case .delete:
                guard let old, selection.contains(old) else { return .success(0) }
                best[parent] = nil
                return .success(1)
            case .add, .set:
                if selection.count > 1 || (step.change == .add && old != nil) { return .failure(1028) }
                best[parent] = selection.first
                if step.change == .set { return .success(selection.isEmpty ? 0 : 1) }
                return .success(selection.first == nil || selection.first == old ? 0 : 1)
            }
        }
    }

    @Test func randomChangesCountLinkLoadAndQueryAsTheModelSays() async throws {
        try await EngineFixture.with { fixture in
            var ids: [String] = []
            var created: [(index: Int, created: Int, id: String)] = []
            for index in 0..<Step.nodes {
                let node = try await fixture.create("Node", #"{"v": \#(index)}"#)
                ids.append(try #require(node["objectId"] as? String))
                created.append((index, try #require(node["created"] as? Int), ids[index]))
            }
            let order = created.sorted { ($0.created, $0.id) < ($1.created, $1.id) }.map(\.index)
            for argument in ["friends:Node:n", "best:Node:1"] {
                _ = try await fixture.change(.set, "Node", ids[0], try RelationColumnArgument(argument), .ids([]))
            }
            let v = ValueExpression.property(PropertyPath(["v"]))
            await propertyCheck(count: 40, input: Step.generator.array(of: 1...8)) { steps in
                for column in ["friends", "best"] {
                    let catalog = try await fixture.engine.cache.catalog(for: fixture.appID)
                    let link = try #require(catalog.table(named: "Node")?.relation(named: column)?.linkTable)
                    try await fixture.sql("DELETE FROM \"\(AppCatalog.schemaName(for: fixture.appID))\".\"\(link)\"")
                }
                var model = Model(creationOrder: order)
                for step in steps {
                    let children: RelationChildren =
                        step.byWhere
                        ? .matching(.membership(v, step.children.map { .integer(Int64($0)) }, negated: false))
                        : .ids(step.children.map { ids[$0] })
                    let expected = model.apply(step)
                    do {
                        let count = try await fixture.change(
                            step.change, "Node", ids[step.parent],
                            try RelationColumnArgument(step.many ? "friends" : "best"), children)
                        #expect(expected == .success(count), "\(step)")
                    } catch let error as ErrorEnvelope {
                        #expect(expected == .failure(error.code), "\(step): \(error.message)")
                    }
                }
                let index = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
                for parent in 0..<Step.nodes {
                    let friends = try await fixture.load("Node", ids[parent], "friends", [("pageSize", "100")])
                    #expect(
                        friends.compactMap { index[$0["objectId"] as? String ?? ""] } == model.friends[parent],
                        "friends of \(parent)")
                    let best = try await fixture.load("Node", ids[parent], "best", [])
                    let expectedBest: [Int] = model.best[parent].map { [$0] } ?? []
                    #expect(
                        best.compactMap { index[$0["objectId"] as? String ?? ""] } == expectedBest, "best of \(parent)")
                }
                let found = try await fixture.find(
                    "Node", [("loadRelations", "friends,best"), ("relationsPageSize", "100"), ("sortBy", "v")])
                for (parent, object) in found.enumerated() {
                    let friends = (object["friends"] as? [[String: Any]] ?? []).map { $0["v"] as? Int }
                    #expect(friends == model.friends[parent], "loaded friends of \(parent)")
                    #expect(
                        (object["best"] as? [String: Any])?["v"] as? Int == model.best[parent],
                        "loaded best of \(parent)")
                }
                for threshold in [0, 3] {
                    let expected = (0..<Step.nodes).filter { model.friends[$0].contains { $0 >= threshold } }
                    #expect(try await vs(fixture, "friends.v >= \(threshold)") == expected, "friends.v >= \(threshold)")
                    #expect(
                        try await vs(fixture, "best.v = \(threshold)")
                            == (0..<Step.nodes).filter { model.best[$0] == threshold })
                    #expect(
                        try await vs(fixture, "Node[friends].v = \(threshold)") == model.friends[threshold].sorted())
                    let notLinked = (0..<Step.nodes).filter { parent in
                        !model.friends[parent].contains { $0 >= threshold }
                    }
                    #expect(try await vs(fixture, "NOT (friends.v >= \(threshold))") == notLinked)
                }
            }
        }
    }

    /// The `v` of every node a where clause selects, ascending.
    private func vs(_ fixture: EngineFixture, _ clause: String) async throws -> [Int] {
        try await fixture.find("Node", [("where", clause), ("sortBy", "v"), ("pageSize", "100")]).compactMap {
            $0["v"] as? Int
        }
    }

    @Test func loadedChildrenAreThoseThePermissionOracleLetsTheCallerFind() async throws {
        try await EngineFixture.with { fixture in
            let docs = try await fixture.seedDocs()
            let holder = try #require(
                try await fixture.create("Holder", #"{"name": "h"}"#, as: fixture.serverCode)["objectId"] as? String)
            _ = try await fixture.engine.changeRelation(
                .set, table: "Holder", parentID: holder, argument: try RelationColumnArgument("docs:Doc:n"),
                children: .ids(docs),
                identity: fixture.serverCode, logger: fixture.logger)
            let query = try FindQuery(
                QueryParameters(queryItems: [
                    (name: "relationsPageSize", value: "100"), (name: "pageSize", value: "100"),
                ]))
            await propertyCheck(
                count: 40, input: PermissionFact.app(upTo: 14), PermissionCallers.generator(appID: fixture.appID)
            ) {
                facts, caller in
                let scenario = try await fixture.storePermissions(facts, ids: docs)
                let expected = fixture.allowed(scenario, caller, .find, docs)
                let loaded = try await EngineFixture.unlessDenied {
                    try await fixture.engine.loadRelation(
                        table: "Holder", parentID: holder, argument: try RelationColumnArgument("docs"), query: query,
                        identity: caller,
                        logger: fixture.logger
                    ).map { try fixture.decode($0)["objectId"] as? String }
                }
                #expect(loaded.map { $0.compactMap { $0 } } ?? [] == expected, "relation API")
                var withDocs = query
                withDocs.relationPaths = [["docs"]]
                let holders = try await EngineFixture.unlessDenied {
                    try await fixture.engine.find("Holder", query: withDocs, identity: caller, logger: fixture.logger)
                }
                for text in holders ?? [] {
                    let ids = (try fixture.decode(text)["docs"] as? [[String: Any]] ?? []).map {
                        $0["objectId"] as? String
                    }
                    #expect(ids.compactMap { $0 } == expected, "loadRelations")
                }
            }
        }
    }
}
