package flightsrv

// ToStatus exposes toStatus to the package's tests.
var ToStatus = toStatus
