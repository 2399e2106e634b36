package flightsrv

// ToStatus exposes toStatus to the package's tests.
var ToStatus = toStatus

// Conform exposes conform to the package's tests.
var Conform = conform
