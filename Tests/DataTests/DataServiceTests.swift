import DataService
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(2))) struct DataServiceTests {
    @Test func readyWithItsDatabase() async throws {
        try await BackendChecks.readyWithDatabase(DataService.self)
    }

    @Test func notReadyWithoutItsDatabase() async throws {
        try await BackendChecks.notReadyWithoutDatabase(DataService.self)
    }

    @Test func unknownEndpointsAnswerWithAnEnvelopeNamingTheService() async throws {
        try await BackendChecks.unknownEndpointNamesService(DataService.self)
    }
}
