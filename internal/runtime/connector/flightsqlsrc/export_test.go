package flightsqlsrc

// NetDiffs and Nettable expose the feed's netting to its tests.
var (
	NetDiffs = netDiffs
	Nettable = nettable
)
