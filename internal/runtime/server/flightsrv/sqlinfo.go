package flightsrv

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
)

// registerSqlInfo fills in what GetSqlInfo reports: the server, then the SQL
// dialect, as upstream Spice describes its own, with DuckDB's answers where
// the two differ. Lists of keywords and functions and the conversion matrix
// are left out: DuckDB's are long and change between versions, and clients
// fall back to their defaults without them.
func (s *Server) registerSqlInfo(sql *sqlService) error {
	const unlimited = int64(math.MaxInt32)
	infos := []struct {
		id  flightsql.SqlInfo
		val any
	}{
		{flightsql.SqlInfoFlightSqlServerName, s.ServerName},
		{flightsql.SqlInfoFlightSqlServerVersion, s.Version},
		{flightsql.SqlInfoFlightSqlServerArrowVersion, "18"},
		{flightsql.SqlInfoFlightSqlServerReadOnly, true},
		{flightsql.SqlInfoFlightSqlServerSql, true},
		{flightsql.SqlInfoFlightSqlServerSubstrait, false},
		{flightsql.SqlInfoFlightSqlServerTransaction, int32(flightsql.SqlTransactionNone)},
		{flightsql.SqlInfoFlightSqlServerCancel, false},
		{flightsql.SqlInfoFlightSqlServerStatementTimeout, int32(0)},
		{flightsql.SqlInfoFlightSqlServerTransactionTimeout, int32(0)},
		{flightsql.SqlInfoFlightSqlServerBulkIngestion, false},
		// The dialect: DuckDB's, read-only.
		{flightsql.SqlInfoDDLCatalog, false},
		{flightsql.SqlInfoDDLSchema, false},
		{flightsql.SqlInfoDDLTable, false},
		{flightsql.SqlInfoIdentifierCase, int32(flightsql.SqlCaseSensitivityCaseInsensitive)},
		{flightsql.SqlInfoIdentifierQuoteChar, `"`},
		{flightsql.SqlInfoQuotedIdentifierCase, int32(flightsql.SqlCaseSensitivityCaseInsensitive)},
		{flightsql.SqlInfoAllTablesAreASelectable, true},
		{flightsql.SqlInfoNullOrdering, int32(flightsql.SqlNullOrderingSortHigh)}, // NULLs last ascending, first descending
		{flightsql.SqlInfoSearchStringEscape, `\`},
		{flightsql.SqlInfoExtraNameChars, ""},
		{flightsql.SqlInfoSupportsColumnAliasing, true},
		{flightsql.SqlInfoNullPlusNullIsNull, true},
		{flightsql.SqlInfoSupportsTableCorrelationNames, true},
		{flightsql.SqlInfoSupportsDifferentTableCorrelationNames, false},
		{flightsql.SqlInfoSupportsExpressionsInOrderBy, true},
		{flightsql.SqlInfoSupportsOrderByUnrelated, true},
		{flightsql.SqlInfoSupportedGroupBy, int32(3)}, // unrelated and beyond the select list
		{flightsql.SqlInfoSupportsLikeEscapeClause, true},
		{flightsql.SqlInfoSupportsNonNullableColumns, true},
		{flightsql.SqlInfoSupportedGrammar, int32(1)}, // core grammar
		{flightsql.SqlInfoANSI92SupportedLevel, int32(0b111)},
		{flightsql.SqlInfoSupportsIntegrityEnhancementFacility, false},
		{flightsql.SqlInfoOuterJoinsSupportLevel, int32(2)}, // full outer joins
		{flightsql.SqlInfoSchemaTerm, "schema"},
		{flightsql.SqlInfoProcedureTerm, "procedure"},
		{flightsql.SqlInfoCatalogTerm, "catalog"},
		{flightsql.SqlInfoCatalogAtStart, true},
		{flightsql.SqlInfoSchemasSupportedActions, int32(0)},
		{flightsql.SqlInfoCatalogsSupportedActions, int32(0)},
		{flightsql.SqlInfoSupportedPositionedCommands, int32(0)},
		{flightsql.SqlInfoSelectForUpdateSupported, false},
		{flightsql.SqlInfoStoredProceduresSupported, false},
		{flightsql.SqlInfoSupportedSubqueries, int32(15)}, // comparisons, EXISTS, IN, quantified
		{flightsql.SqlInfoCorrelatedSubqueriesSupported, true},
		{flightsql.SqlInfoSupportedUnions, int32(3)}, // UNION and UNION ALL
		{flightsql.SqlInfoMaxBinaryLiteralLen, unlimited},
		{flightsql.SqlInfoMaxCharLiteralLen, unlimited},
		{flightsql.SqlInfoMaxColumnNameLen, unlimited},
		{flightsql.SqlInfoMaxColumnsInGroupBy, unlimited},
		{flightsql.SqlInfoMaxColumnsInIndex, unlimited},
		{flightsql.SqlInfoMaxColumnsInOrderBy, unlimited},
		{flightsql.SqlInfoMaxColumnsInSelect, unlimited},
		{flightsql.SqlInfoMaxColumnsInTable, unlimited},
		{flightsql.SqlInfoMaxConnections, unlimited},
		{flightsql.SqlInfoMaxStatements, int64(1)}, // one statement per query
		{flightsql.SqlInfoMaxTablesInSelect, unlimited},
		{flightsql.SqlInfoTransactionsSupported, false},
		{flightsql.SqlInfoDataDefinitionCausesTransactionCommit, false},
		{flightsql.SqlInfoDataDefinitionsInTransactionsIgnored, true},
		{flightsql.SqlInfoBatchUpdatesSupported, false},
		{flightsql.SqlInfoSavePointsSupported, false},
		{flightsql.SqlInfoNamedParametersSupported, false},
		{flightsql.SqlInfoLocatorsUpdateCopy, false},
		{flightsql.SqlInfoStoredFunctionsUsingCallSyntaxSupported, false},
	}
	for _, info := range infos {
		if err := sql.RegisterSqlInfo(info.id, info.val); err != nil {
			return fmt.Errorf("register sql info %d: %w", info.id, err)
		}
	}
	return nil
}
