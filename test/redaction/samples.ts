// Values of each kind the redaction detectors find, and look-alikes they must keep: shared by the
// redaction unit tests and the end-to-end test that plants them on every way in.

/** A valid value of each built-in detector, as a user would write it. */
export const PLANTED = {
  email: "ada.lovelace@example.com",
  phone: "+44 20 7946 0958",
  payment_card: "4111 1111 1111 1111",
  iban: "DE89 3704 0044 0532 0130 00",
  ip_address: "203.0.113.42",
  national_id: "536-90-4399",
  credential: `sk-proj-${"A1b2C3d4E5".repeat(7)}abcd${"T3BlbkFJ"}${"Z9y8X7w6V5".repeat(7)}wxyz`,
} as const;

export type PlantedKind = keyof typeof PLANTED;

/** One sentence carrying every planted value. */
export const PLANTED_TEXT = `Reach me at ${PLANTED.email} or ${PLANTED.phone}; card ${PLANTED.payment_card}, IBAN ${PLANTED.iban}, from ${PLANTED.ip_address}, SSN ${PLANTED.national_id}, key ${PLANTED.credential}.`;

/** Look-alikes: the right shape, failing the check (each must be kept as it is). */
export const LOOK_ALIKES = {
  card_failing_luhn: "4111 1111 1111 1112",
  sixteen_digits: "1234567812345678",
  iban_bad_checksum: "DE89 3704 0044 0532 0130 01",
  ip_out_of_range: "999.10.10.10",
  time_of_day: "12:30:45",
  ssn_area_000: "000-12-3456",
  version: "1.2.3",
} as const;

/** Every placeholder a mask leaves. */
export const MASKS: Record<PlantedKind, string> = {
  email: "[EMAIL]",
  phone: "[PHONE]",
  payment_card: "[PAYMENT_CARD]",
  iban: "[IBAN]",
  ip_address: "[IP_ADDRESS]",
  national_id: "[NATIONAL_ID]",
  credential: "[CREDENTIAL]",
};
