import DataEngine
import Foundation
import QueryLanguage
import TestSupport
import Testing

@testable import GeoService

/// 10,000 random points (poles, the antimeridian and duplicates among them) searched by
/// radius, rectangle, category, metadata and where clause: every answer is exactly the set a
/// plain computation finds, with the same distances; clusters partition what a search finds.
@Suite(.timeLimit(.minutes(10))) struct GeoSearchPropertyTests {
    static let colours = ["red", "green", "blue"]

    @Test func searchesFindExactlyWhatThePlainComputationFinds() async throws {
        let seed = SeededGenerator.seed
        var random = SeededGenerator(seed: seed)
        let points = Self.points(10_000, using: &random)
        let searches = try (0..<60).map { try Self.search($0, using: &random) }
        try await GeoFixture.with { fixture in
            let saved = try await fixture.save(points)
            for (round, (search, predicate)) in searches.enumerated() {
                let found = try await fixture.all(search)
                try Self.check(found, against: saved, search, predicate, context: "seed \(seed), round \(round)")
                let count = try await fixture.store.count(app: fixture.app, search)
                #expect(count == found.count, "seed \(seed), round \(round): count \(count) vs \(found.count) found")
            }
        }
    }

    @Test func clustersPartitionTheirSearch() async throws {
        let seed = SeededGenerator.seed
        var random = SeededGenerator(seed: seed)
        let points = Self.points(2_000, using: &random)
        let searches = try (0..<8).map { round in
            var (search, _) = try Self.search(round * 3 % 5, using: &random)
            search.condition = nil
            search.clusterCell = [0.5, 5, 30, 90, 360][round % 5] * Double.random(in: 0.5...1, using: &random)
            return search
        }
        try await GeoFixture.with { fixture in
            _ = try await fixture.save(points)
            for (round, search) in searches.enumerated() {
                var plain = search
                plain.clusterCell = nil
                let expected = Set(try await fixture.all(plain).map(Self.id))
                var clustered = Set<String>()
                for item in try await fixture.all(search) {
                    switch item {
                    case .point(let point):
                        #expect(clustered.insert(point.objectId).inserted, "seed \(seed): \(point.objectId) twice")
                    case .cluster(let cluster):
                        var inCell = search
                        inCell.cell = cluster.id
                        inCell.clusterCell = nil
                        let members = try await fixture.all(inCell).map(Self.id)
                        #expect(
                            members.count == cluster.totalPoints,
                            "seed \(seed): \(cluster.id) counts \(cluster.totalPoints), holds \(members.count)")
                        #expect(members.count > 1)
                        for id in members { #expect(clustered.insert(id).inserted, "seed \(seed): \(id) in two cells") }
                    }
                }
                #expect(
                    clustered == expected,
                    "seed \(seed), round \(round): clusters hold \(clustered.count), the search \(expected.count)")
            }
        }
    }

    private static func id(_ item: GeoItem) -> String {
        if case .point(let point) = item { return point.objectId }
        return ""
    }

    private static func check(
        _ found: [GeoItem], against saved: [SamplePoint], _ search: GeoSearch,
        _ predicate: @escaping @Sendable (JSONObject) -> Bool,
        context: String
    ) throws {
        var answered: [String: GeoPoint] = [:]
        for item in found {
            guard case .point(let point) = item else {
                Issue.record("\(context): a cluster without clustering")
                continue
            }
            #expect(answered.updateValue(point, forKey: point.objectId) == nil, "\(context): \(point.objectId) twice")
        }
        var expected = 0
        for point in saved {
            guard let matches = GeoOracle.matches(point, search, where: predicate) else {
                answered[point.id] = nil
                continue
            }
            let answer = answered.removeValue(forKey: point.id)
            #expect(
                (answer != nil) == matches,
                "\(context): \(point.coordinate) \(point.categories) \(point.metadata.members) \(matches ? "missing" : "found")"
            )
            if matches { expected += 1 }
            if let answer, let center = search.center {
                let distance = GeoOracle.distance(center, point.coordinate) / search.unit.meters
                #expect(
                    abs((answer.distance ?? -1) - distance) <= max(distance * 0.001, 1e-6),
                    "\(context): distance \(answer.distance ?? -1) vs \(distance)")
            }
        }
        #expect(answered.isEmpty, "\(context): \(answered.count) answers the oracle does not know")
        if search.center != nil {
            let distances = found.compactMap { item -> Double? in
                if case .point(let point) = item { return point.distance }
                return nil
            }
            #expect(distances == distances.sorted(), "\(context): not nearest first")
        }
    }

    /// Random points: most anywhere, some on the poles and the antimeridian, some repeated.
    static func points(_ count: Int, using random: inout SeededGenerator) -> [SamplePoint] {
        var points: [SamplePoint] = []
        while points.count < count {
            let coordinate: Coordinate
            switch Int.random(in: 0..<20, using: &random) {
            case 0:
                coordinate = try! Coordinate(
                    latitude: [90, -90].randomElement(using: &random)!,
                    longitude: .random(in: -180...180, using: &random))
            case 1:
                coordinate = try! Coordinate(
                    latitude: .random(in: -90...90, using: &random),
                    longitude: [180, -180, 179.9999, -179.9999].randomElement(using: &random)!)
            case 2 where !points.isEmpty: coordinate = points.randomElement(using: &random)!.coordinate
            default:
                coordinate = try! Coordinate(
                    latitude: .random(in: -90...90, using: &random), longitude: .random(in: -180...180, using: &random))
            }
            let categories = ["Default", "A", "B"].filter { _ in Bool.random(using: &random) }
            let metadata = JSONObject([
                ("n", .integer(.random(in: 0..<100, using: &random))),
                ("colour", .string(colours.randomElement(using: &random)!)),
            ])
            points.append(
                SamplePoint(
                    coordinate: coordinate, categories: categories.isEmpty ? ["Default"] : categories,
                    metadata: metadata))
        }
        return points
    }

    /// A random search and the where clause's meaning, if it has one.
    static func search(_ round: Int, using random: inout SeededGenerator) throws -> (
        GeoSearch, @Sendable (JSONObject) -> Bool
    ) {
        var search = GeoSearch()
        search.categories = [["Default"], ["A"], ["A", "B"], ["Default", "A", "B"]].randomElement(using: &random)!
        switch round % 4 {
        case 0:
            let center = try Coordinate(
                latitude: .random(in: -90...90, using: &random), longitude: .random(in: -180...180, using: &random))
            search.unit = DistanceUnit.allCases.randomElement(using: &random)!
            search.area = .radius(.init(center: center, meters: .random(in: 1_000...Sphere.farthest, using: &random)))
            search.center = center
        case 1:
            let south = Double.random(in: -90...90, using: &random)
            search.area = .rectangle(
                GeoRectangle(
                    north: .random(in: south...90, using: &random), west: .random(in: -180...180, using: &random),
                    south: south,
                    east: .random(in: -180...180, using: &random)))
        case 2:
            let pole = try Coordinate(
                latitude: [89.9, -89.9].randomElement(using: &random)!,
                longitude: .random(in: -180...180, using: &random))
            search.area = .radius(.init(center: pole, meters: .random(in: 1_000...3_000_000, using: &random)))
            search.center = pole
        default:
            let center = try Coordinate(
                latitude: .random(in: -60...60, using: &random),
                longitude: [180, -179.5].randomElement(using: &random)!)
            search.area = .radius(.init(center: center, meters: .random(in: 10_000...2_000_000, using: &random)))
            search.center = center
        }
        let colour = colours.randomElement(using: &random)!
        let limit = Int64.random(in: 0..<100, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            search.metadataEquals = JSONObject([("colour", .string(colour))])
            return (search, { _ in true })
        case 1:
            search.condition = try QueryParser.condition("n < \(limit) AND colour != '\(colour)'")
            return (search, { $0["n"]!.integerValue! < limit && $0["colour"]!.string != colour })
        case 2:
            search.condition = try QueryParser.condition("colour IN ('\(colour)') OR n >= \(limit)")
            return (search, { $0["colour"]!.string == colour || $0["n"]!.integerValue! >= limit })
        default:
            return (search, { _ in true })
        }
    }
}
