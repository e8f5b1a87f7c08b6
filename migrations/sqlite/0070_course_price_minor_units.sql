-- Course prices become exact: integer minor units of their currency (cents for EUR, yen
-- for JPY, fils for KWD) instead of a DOUBLE PRECISION amount (issue 23). A float cannot
-- hold most decimal prices exactly, and sqlx 0.9.0's Any driver binds a NULL f64 as
-- PostgreSQL float4, which broke every later priced insert on the same connection.
-- The app reads the amount as price_minor / 10^(minor unit of currency), with the table
-- of minor units in langcamp-core/src/money.rs; the CASE below is its copy as of this
-- migration (ISO 4217). A price without a currency (the app never allowed one) counts
-- in hundredths. A stored price with more decimals than its currency allows (the old
-- code did not check) is rounded half away from zero to the minor unit.
-- The column is added at the end on both backends, so their column order stays the same.
ALTER TABLE courses ADD COLUMN price_minor BIGINT CHECK (price_minor IS NULL OR price_minor >= 0);

UPDATE courses
SET price_minor = CAST(ROUND(price * CASE
        WHEN currency IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF',
                          'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') THEN 1
        WHEN currency IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN 1000
        WHEN currency IN ('CLF', 'UYW') THEN 10000
        ELSE 100
    END) AS BIGINT)
WHERE price IS NOT NULL;

ALTER TABLE courses DROP COLUMN price;
