import DataService
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(20))) struct DataServiceTests {
    @Test func readyWithItsDatabase() async throws {
        try await BackendChecks.readyWithDatabase(DataService.self)
    }

    @Test func notReadyWithoutItsDatabase() async throws {
        try await BackendChecks.notReadyWithoutDatabase(DataService.self)
    }

    @Test func servesItsManifestToTheGatewayOnly() async throws {
        try await BackendChecks.servesItsManifestToTheGatewayOnly(DataService.self)
    }
}
