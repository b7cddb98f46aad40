"""Generate the bundled sample evaluation for triage (DESIGN.md section 8).

    python sample_runs/make_sample.py              # writes into the folder beside this file
    python sample_runs/make_sample.py --out DIR    # writes into DIR

The data is synthetic but shaped like a real A/B of "contextual headers": arm A ("plain") embeds
chunk bodies, arm B ("headers") embeds the heading path prepended to the body. Eight tenants, 200
queries, one corpus. Every number of the story is planted on purpose (see PLAN and the SPECIAL
queries below) and checked at the end by `verify`, which reads the written files back and
recomputes everything in plain Python. Standard library + pyarrow only; fully deterministic.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import math
import pathlib
import random
import re

import pyarrow as pa
import pyarrow.parquet as pq

SEED = 20261130
K = 5
DEPTH = 20
SCAN_MAX = {"a": 64, "b": 32}  # each arm's planner: exact scan up to this many eligible chunks
META_COMMON = {
    "embedding_model": "e5-base-v2",
    "embedding_model_version": "intfloat/e5-base-v2@1c644c92",
    "chunker": "recursive-512",
    "corpus_snapshot": "corpus-2026-10-15",
}
LABELS_CREATED = "2026-10-20T11:30:00Z"
RUNS = {  # file stem -> (arm, name, k, created_at, header_mode)
    "plain": ("a", "plain", 5, "2026-11-02T09:14:03Z", "none"),
    "headers": ("b", "headers", 5, "2026-11-09T16:41:27Z", "prepend"),
    "headers_k10": ("b", "headers-k10", 10, "2026-11-09T17:05:52Z", "prepend"),
}

# ---------------------------------------------------------------------------------------------
# 1. The planted story: per tenant, the paired cells at k = 5
#    (both_hit, both_miss, a_miss_b_hit, a_hit_b_miss). Totals: 118 / 36 / 40 / 6.
#    B hit rates: acme 24/34, borealis 24/32, granite 15/20 are below 0.80; the rest are above.
#    harbor-clinic is the small tenant answered by exact scan in both arms.
# ---------------------------------------------------------------------------------------------
PLAN = {
    "acme-legal": (16, 9, 8, 1),
    "borealis-health": (17, 7, 7, 1),
    "cobalt-retail": (19, 4, 6, 1),
    "driftwood-logistics": (18, 4, 5, 1),
    "evergreen-bank": (18, 4, 4, 0),
    "fjord-software": (15, 3, 5, 1),
    "granite-insurance": (10, 4, 5, 1),
    "harbor-clinic": (5, 1, 0, 0),
}
SCAN_TENANT = "harbor-clinic"
CELL_NAMES = ("both_hit", "both_miss", "a_miss_b_hit", "a_hit_b_miss")

# ---------------------------------------------------------------------------------------------
# 2. Text banks. A topic is (key, heading path below the document title, chunk bodies, asks);
#    an ask is (query text as a user would type it, index of the body that answers it, type).
# ---------------------------------------------------------------------------------------------
HANDBOOK = [
    ("parental", "Leave > Parental leave", [
        "Employees with at least {months} months of service receive {pweeks} weeks of fully paid "
        "parental leave after the birth or adoption of a child. The leave can be taken in up to "
        "three blocks within the first year.",
        "Tell your manager and {people} at least {pnotice} weeks before the expected start date. "
        "Requests are filed in {hr} under Time off > Parental leave, and a birth or adoption "
        "certificate is due within 30 days.",
        "During parental leave you keep accruing vacation and your health cover continues "
        "unchanged. Returning parents may work 80% of their hours at full pay for the first four "
        "weeks back.",
    ], [
        ("how many weeks off do I get when my kid is born", 0, "policy"),
        ("do I have to tell my manager in advance before taking baby leave", 1, "policy"),
        ("can I go part time for a bit after coming back from parental leave", 2, "policy"),
    ]),
    ("vacation", "Leave > Annual leave", [
        "Full-time staff accrue {vac} days of paid vacation per calendar year, prorated for "
        "part-time contracts. Up to {carry} unused days carry over to the next year and expire on "
        "March 31.",
        "Book vacation in {hr} at least two weeks ahead for absences longer than three days. "
        "Between December 15 and January 5 approval is at your manager's discretion.",
    ], [
        ("how many vacation days do I get a year", 0, "lookup"),
        ("can I carry over unused holiday days", 0, "policy"),
        ("how far ahead do I need to book time off", 1, "policy"),
    ]),
    ("sick", "Leave > Sick leave", [
        "If you are ill, tell your manager before {start} on the first day of absence. From the "
        "{sickcert} day of absence a doctor's note is required.",
        "Paid sick leave is capped at {sick} days per year. Longer illnesses move to the short-term"
        " disability plan administered by {insurer}.",
    ], [
        ("when do I need a doctor's note for being sick", 0, "policy"),
        ("what happens if I'm off sick for more than a few weeks", 1, "policy"),
    ]),
    ("remote", "Working hours > Remote work", [
        "Employees may work remotely up to {remote} days per week with their manager's agreement. "
        "Core collaboration hours are 10:00 to 15:00 local time.",
        "The company reimburses a one-time home-office allowance of {hoa} for a chair, desk or "
        "monitor. Submit receipts in {expense} within 60 days of purchase.",
        "Working from another country for more than ten working days a year needs written approval "
        "from {people}, because of tax and insurance rules.",
    ], [
        ("how many days a week can I work from home", 0, "policy"),
        ("will the company pay for a desk chair for my home office", 1, "policy"),
        ("can I work from abroad for a month", 2, "policy"),
    ]),
    ("travel", "Expenses > Business travel", [
        "Economy class is required for flights under six hours; business class needs VP approval. "
        "Hotels are booked through {travel} within the city caps published on the intranet.",
        "The daily meal allowance on business trips is {perdiem}. Alcohol, minibar charges and "
        "in-room films are not reimbursable.",
    ], [
        ("can I fly business class for work", 0, "policy"),
        ("what's the food allowance per day when travelling", 1, "lookup"),
    ]),
    ("claims", "Expenses > Expense claims", [
        "Submit expense claims in {expense} within {claimdays} days with an itemised receipt. "
        "Approved claims are paid with the next payroll run.",
        "If a receipt is lost, file a missing-receipt declaration for amounts up to {lostcap}. "
        "Above that amount the expense cannot be reimbursed.",
    ], [
        ("how long do I have to submit expenses", 0, "policy"),
        ("I lost the receipt for a client dinner, can I still get paid back", 1, "policy"),
    ]),
    ("health", "Benefits > Health insurance", [
        "All employees and their dependants are covered by the {insurer} group health plan from the"
        " first day of employment. The company pays {hshare}% of the premium.",
        "To add a spouse or child, submit the change in {hr} within 30 days of the life event. "
        "Outside that window, changes wait for open enrolment in November.",
    ], [
        ("is my partner covered by the company health plan", 0, "policy"),
        ("how do I add my newborn to my health insurance", 1, "howto"),
    ]),
    ("pension", "Benefits > Retirement plan", [
        "The company matches retirement contributions up to {match}% of base salary. Matching "
        "contributions vest after {vest} years of service.",
        "You can change your contribution rate once per quarter in the {pension} portal. Changes "
        "take effect from the next payroll.",
    ], [
        ("how much does the company match on my pension", 0, "lookup"),
        ("when can I change how much I put into retirement", 1, "policy"),
    ]),
    ("gifts", "Code of conduct > Gifts and hospitality", [
        "Gifts from suppliers or clients worth more than {giftcap} must be declared in the gifts "
        "register within five working days. Cash and vouchers may never be accepted.",
        "Invitations to events are allowed when a business discussion takes place and the host "
        "attends. Travel and accommodation paid by a supplier need approval from Compliance.",
    ], [
        ("a supplier sent me a bottle of wine, do I need to report it", 0, "policy"),
        ("can I accept a vendor's invite to a football match", 1, "policy"),
    ]),
    ("security", "IT and security > Accounts and devices", [
        "Passwords must be at least {pwlen} characters and are stored in {pwm}. Multi-factor "
        "authentication is mandatory for email, VPN and {hr}.",
        "Report a lost or stolen laptop or phone to the IT service desk ({itdesk}) immediately. The"
        " device is locked and wiped remotely.",
    ], [
        ("how long does my password need to be", 0, "lookup"),
        ("what do I do if my laptop gets stolen", 1, "howto"),
    ]),
    ("reviews", "Performance and pay > Reviews", [
        "Performance reviews take place twice a year, in {rev1} and {rev2}. Each review combines a "
        "self-assessment, peer feedback and a calibration meeting.",
        "Salary changes are decided in the {rev2} cycle and take effect from the first payroll of "
        "the following quarter.",
    ], [
        ("how often are performance reviews", 0, "lookup"),
        ("when do pay raises happen", 1, "policy"),
    ]),
    ("leaving", "Leaving the company > Notice and final pay", [
        "After probation the notice period is {noticep} for both sides unless your contract says "
        "otherwise. Resignations are submitted in writing to your manager and {people}.",
        "Unused vacation days are paid out with the final salary. Company equipment must be "
        "returned on or before your last working day.",
    ], [
        ("how much notice do I need to give if I quit", 0, "policy"),
        ("do I get paid for holidays I didn't take when I leave", 1, "policy"),
    ]),
]

PRODUCT = [
    ("install", "Getting started > System requirements", [
        "{product} runs on Windows 11, macOS 13 or later and Ubuntu 22.04. The desktop app needs 4 "
        "GB of RAM and 2 GB of free disk space.",
        "A licence key is requested at first launch. Owners find it in the admin console under "
        "Billing > Licences.",
    ], [("which operating systems does {product} run on", 0, "lookup"), (
        "where do I find our licence key", 1, "howto")]),
    ("sso", "Accounts > Single sign-on", [
        "{product} supports SAML 2.0 and OpenID Connect. An admin uploads the identity provider "
        "metadata under Settings > Security > SSO and maps the email attribute.",
        "Once SSO is enforced, password sign-in is disabled for everyone except the owner's "
        "break-glass account.",
    ], [("how do we set up SSO with Okta", 0, "howto"), (
        "can people still log in with a password after we turn on SSO", 1, "howto")]),
    ("roles", "Accounts > Roles and permissions", [
        "There are four built-in roles: Owner, Admin, Editor and Viewer. Editors change content but"
        " cannot manage users; custom roles are available on the Enterprise plan.",
        "Only Owners can transfer ownership, change the plan or delete the workspace.",
    ], [("what's the difference between admin and editor", 0,
        "lookup"), ("who is allowed to delete the workspace", 1, "lookup")]),
    ("export", "Data > Export", [
        "Admins can export any report as CSV or JSON from Reports > Export. Exports over "
        "{exportcap} rows run in the background and arrive by email as a link valid for 72 hours.",
    ], [("how do I get all my data out as a spreadsheet", 0,
        "howto"), ("the download link for my export stopped working", 0, "troubleshoot")]),
    ("retention", "Data > Deleted items", [
        "Deleted records stay in the recycle bin for {bin} days and an Admin can restore them. "
        "After that they are purged, and they disappear from backups 35 days later.",
    ], [("I deleted something by mistake, can I get it back", 0, "howto")]),
    ("webhooks", "Integrations > Webhooks", [
        "Webhooks send a POST request with a JSON body for every subscribed event. Failed "
        "deliveries are retried {retries} times with exponential backoff over 24 hours.",
        "Each request carries an X-Signature header: an HMAC-SHA256 of the raw body keyed with your"
        " webhook secret. Reject requests whose signature does not match.",
    ], [("how many times do webhooks retry", 0, "lookup"), (
        "how do I check a webhook really came from you", 1, "howto")]),
    ("ratelimit", "Integrations > API limits", [
        "The REST API allows {rate} requests per minute per API key. Requests above the limit get "
        "HTTP 429 with a Retry-After header giving the wait in seconds.",
    ], [("getting 429 errors from the API", 0, "troubleshoot")]),
    ("invoices", "Billing > Invoices", [
        "Invoices are issued on the first day of each billing period and emailed to the billing "
        "contact. Past invoices can be downloaded as PDF from Billing > History.",
        "To change the billing address or VAT number, edit Billing > Details. Changes apply from "
        "the next invoice; issued invoices are not reissued.",
    ], [("where can I download old invoices", 0, "howto"), (
        "need to change the VAT number on our invoices", 1, "howto")]),
    ("sync", "Troubleshooting > Sync errors", [
        "Error E-{errcode} means the local cache is out of date. Sign out, clear the cache under "
        "Settings > Advanced and sign in again.",
        "If sync still fails, collect the log bundle from Help > Diagnostics and attach it to a "
        "support request.",
    ], [("sync keeps failing with an error code", 0, "troubleshoot"), (
        "where do I get logs to send to support", 1, "howto")]),
    ("audit", "Security > Audit log", [
        "The audit log records sign-ins, permission changes and exports for {auditdays} days. "
        "Enterprise workspaces can stream it to a SIEM through the audit API.",
    ], [("can I see who exported data last month", 0, "howto")]),
    ("notify", "Notifications > Email alerts", [
        "Each user chooses which events send an email under Profile > Notifications. Admins can set"
        " workspace defaults and lock them.",
    ], [("how do I stop getting so many emails", 0, "howto")]),
]

# (kind, title, customer report, resolution, the query a user would type)
TICKETS = [
    ("login", "Cannot sign in after password reset",
     "Since resetting my password this morning every sign-in attempt says 'invalid credentials', on"
     " the web app and on mobile. Colleagues can sign in fine.",
     "The reset link came from an old email that pointed at the staging environment. The customer "
     "reset the password again from the production sign-in page and could log in.",
     "I reset my password and still can't sign in"),
    ("double", "Charged twice for one invoice",
     "Our card was charged twice for this month's subscription. Please refund the duplicate "
     "payment.",
     "The second charge was a card authorisation hold, not a payment. It drops off within five "
     "business days; confirmed with the payment provider and explained to the customer.",
     "we got charged twice this month"),
    ("export", "Report export never finishes",
     "Exporting the yearly report spins for several minutes and then fails with 'request timed "
     "out'.",
     "The export had more than {exportcap} rows, which must run as a background export. Switched "
     "the customer to Reports > Export > Send by email; the file arrived ten minutes later.",
     "export spins forever and then times out"),
    ("webhook401", "Webhook deliveries failing with 401",
     "Since yesterday none of our webhook calls arrive; your delivery log shows 401 for every "
     "attempt.",
     "The customer had rotated the webhook secret in {product} but not in their receiver, so "
     "signature checks failed. Updated the secret on their side and replayed the failed events.",
     "webhooks started failing with unauthorized after we changed settings"),
    ("sso_loop", "Redirect loop when signing in with SSO",
     "Users bounce between the identity provider and {product} until the browser gives up with 'too"
     " many redirects'.",
     "The identity provider's clock was more than five minutes off, so assertions were rejected as "
     "expired. The customer fixed NTP on the IdP servers and sign-in worked.",
     "stuck in a redirect loop when signing in with SSO"),
    ("android", "Mobile app closes immediately on Android",
     "The app closes the moment it opens on my Pixel phone. Reinstalling did not help.",
     "Known crash in app version 4.2.0 on Android 14, fixed in 4.2.1. The customer updated from the"
     " Play Store and the app opens normally.",
     "app crashes as soon as I open it on my android phone"),
    ("invite", "Invited user never receives the email",
     "I invited a new colleague three times but the invitation email never arrives, not even in "
     "spam.",
     "The customer's mail gateway quarantined messages from noreply@ addresses. IT allowlisted the "
     "sender domain and the invitation arrived.",
     "the invite email never arrived for our new hire"),
    ("import", "Rows missing after CSV import",
     "I imported a CSV of 2,400 contacts and only about half of them show up.",
     "The file used semicolons as separators and some rows had line breaks inside quoted fields. "
     "Re-imported with the delimiter set to semicolon; all rows loaded.",
     "imported a csv and half the rows are missing"),
    ("slow", "Dashboard takes a minute to load",
     "The main dashboard has become very slow, almost a minute before the charts appear.",
     "Two widgets filtered on an unindexed custom field. Enabled indexing for that field under "
     "Settings > Data; the dashboard now loads in two seconds.",
     "dashboard takes forever to load"),
]

# Contract clauses: (key, section, [(sub-clause heading, body)], asks). {cp} names the supplier.
CLAUSES = [
    ("parties", "1. Parties and definitions", [
        ("1.1 Parties", "This Master Services Agreement is made between {company} (\"Customer\") "
                        "and {cp} (\"Supplier\"). Capitalised terms have the meanings given in "
                        "Schedule 1."),
    ], []),
    ("term", "2. Term", [
        ("2.1 Initial term and renewal", "This Agreement starts on the Effective Date and runs for "
                                         "an initial term of {term} months. It then renews "
                                         "automatically for successive 12-month periods unless "
                                         "either party gives at least {renew} days' written notice "
                                         "of non-renewal."),
    ], [("does the {cps} contract renew automatically", 0, "lookup"),
        ("how much notice do we need to give to stop the {cps} contract renewing", 0, "lookup")]),
    ("fees", "3. Fees and payment", [
        ("3.1 Invoicing", "Supplier invoices the fees monthly in arrears. Customer shall pay all "
                          "undisputed invoices within {net} days of the invoice date."),
        ("3.2 Late payment", "Undisputed amounts not paid when due bear interest at {interest}% per"
                             " month from the due date until payment."),
    ], [("what are the payment terms with {cps}", 0, "lookup"), (
        "is there interest if we pay {cps} late", 1, "lookup")]),
    ("sla", "5. Service levels", [
        ("5.1 Availability", "Supplier shall make the Service available {sla}% of each calendar "
                             "month, excluding maintenance announced at least five days in "
                             "advance."),
        ("5.2 Service credits", "If availability falls below the target, Customer receives a "
                                "service credit of 5% of the monthly fee for each full 0.1% below "
                                "target, up to 30%."),
    ], [("what uptime does {cps} guarantee", 0, "lookup"), (
        "do we get money back if {cps} goes down", 1, "lookup")]),
    ("confidentiality", "7. Confidentiality", [
        ("7.1 Obligations", "Each party shall protect the other party's Confidential Information "
                            "with at least reasonable care and use it only to perform this "
                            "Agreement. These obligations survive for {confyears} years after "
                            "termination."),
    ], [("how long does the confidentiality obligation last after the {cps} contract ends", 0,
        "lookup")]),
    ("dataprot", "8. Data protection", [
        ("8.3 Breach notification", "Supplier shall notify Customer of a Personal Data Breach "
                                    "without undue delay and in any event within {breachh} hours of"
                                    " becoming aware of it."),
    ], [("how fast does {cps} have to tell us about a data breach", 0, "lookup")]),
    ("termination", "9. Termination", [
        ("9.1 Termination for cause", "Either party may terminate this Agreement with immediate "
                                      "effect by written notice if the other party commits a "
                                      "material breach that is not cured within {cure} days of "
                                      "notice. Failure to pay undisputed fees within {latepay} days"
                                      " of the due date is a material breach."),
        ("9.2 Consequences of termination", "On termination Customer shall pay all fees accrued up "
                                            "to the termination date, and Supplier shall return or "
                                            "delete Customer Data within 30 days."),
    ], [("can {cps} terminate early if we miss a payment", 0, "lookup"),
        ("what happens to our data if the contract with {cps} ends", 1, "lookup")]),
    ("liability", "10. Liability", [
        ("10.1 Cap", "Except for breaches of confidentiality and the indemnities in clause 11, each"
                     " party's total liability under this Agreement is capped at the fees paid in "
                     "the {capmonths} months before the claim."),
    ], [("what is the liability cap in the {cps} agreement", 0, "lookup")]),
    ("subcontract", "12. Subcontracting and assignment", [
        ("12.1 Subcontractors", "Supplier may use subcontractors only with Customer's prior written"
                                " consent, which shall not be unreasonably withheld. Supplier "
                                "remains liable for its subcontractors."),
        ("12.2 Assignment", "Neither party may assign this Agreement without the other's consent, "
                            "except to an affiliate or to a successor in a merger or sale of "
                            "substantially all of its assets."),
    ], [("is {cps} allowed to outsource the work to someone else", 0, "lookup"),
        ("what happens to the contract if {cps} gets acquired", 1, "lookup")]),
    ("insurance", "13. Insurance", [
        ("13.1 Required cover", "Supplier shall maintain professional indemnity insurance of at "
                                "least {insamt} per claim during the term and for two years after "
                                "it ends."),
    ], [("how much insurance does {cps} need to carry", 0, "lookup")]),
    ("law", "15. Governing law", [
        ("15.1 Law and jurisdiction", "This Agreement is governed by the laws of {law}. The courts "
                                      "of {court} have exclusive jurisdiction over any dispute."),
    ], [("which country's law applies to the {cps} contract", 0, "lookup")]),
]
# Asked without naming a supplier: every supplier's clause answers (multi-gold).
CLAUSE_ASKS_ANY = [("can the vendor terminate early if we miss a payment", "termination", 0),
                   ("what uptime do our suppliers guarantee", "sla", 0)]

GERMAN = [  # fjord-software's German user manual, asked in German
    ("de_install", "Installation > Systemvoraussetzungen", [
        "Fjord Deploy läuft unter Ubuntu 22.04, Debian 12 und macOS 13 oder neuer. Der Agent "
        "benötigt mindestens 2 GB Arbeitsspeicher und 10 GB freien Speicherplatz.",
        "Die Installation erfolgt über den Paketmanager oder das Skript install.sh; dafür sind "
        "Administratorrechte erforderlich.",
    ], [("welche Betriebssysteme werden von Fjord Deploy unterstützt", 0, "lookup")]),
    ("de_password", "Konto und Anmeldung > Passwort zurücksetzen", [
        "Klicken Sie auf der Anmeldeseite auf „Passwort vergessen“. Der Link in der E-Mail ist 30 "
        "Minuten gültig; danach muss ein neuer Link angefordert werden.",
        "Ist Single Sign-on aktiviert, wird das Passwort ausschließlich beim Identitätsanbieter "
        "Ihres Unternehmens verwaltet.",
    ], [("wie setze ich mein Passwort zurück", 0, "howto")]),
    ("de_trash", "Projekte > Gelöschte Projekte wiederherstellen", [
        "Gelöschte Projekte bleiben 30 Tage im Papierkorb und können von Administratoren "
        "wiederhergestellt werden. Danach werden sie endgültig gelöscht.",
    ], [("wie lange kann man ein gelöschtes Projekt wiederherstellen", 0, "howto")]),
]
FRENCH = [  # evergreen-bank's French customer guide, asked in French
    ("fr_limits", "Virements > Plafonds", [
        "Le plafond par défaut des virements sortants est de 50 000 $ par jour ouvré. Un "
        "administrateur du compte peut demander une hausse temporaire depuis Paramètres > Limites.",
        "Les virements supérieurs à 10 000 $ exigent la validation d'un second signataire.",
    ], [("quel est le plafond des virements par jour", 0, "lookup")]),
    ("fr_2fa", "Sécurité > Double authentification", [
        "La double authentification est obligatoire pour tous les utilisateurs. Elle s'active "
        "depuis Profil > Sécurité avec une application d'authentification ou une clé matérielle.",
    ], [("comment activer la double authentification", 0, "howto")]),
    ("fr_statements", "Relevés > Télécharger un relevé", [
        "Les relevés mensuels sont disponibles en PDF et en CSV sous Comptes > Relevés pendant sept"
        " ans.",
    ], [("où télécharger mes relevés de compte", 0, "howto")]),
]

# Release notes: one doc per product, two chunks per release (what is new, what was fixed).
FEATURES = ["dark mode for the web app", "bulk edit for custom fields", "CSV export of audit events",
            "just-in-time user provisioning over SAML", "saved filters on the dashboard",
            "webhook events for deleted records", "keyboard shortcuts for navigation",
                "Spanish and Portuguese translations",
            "per-user API keys", "scheduled reports by email", "a read-only Auditor role",
                "field-level change history",
            "a status page link in the help menu", "bulk user import from CSV",
                "IP allowlists for the admin console"]
FIXES = ["a crash when opening very large reports", "wrong time zone offsets in exported dates",
         "duplicate notification emails after a password change",
             "slow search when a filter contains an apostrophe",
         "sign-out not clearing the session on mobile", "pagination skipping a row in the API",
             "blank charts in Safari 17",
         "webhook retries ignoring the Retry-After header",
             "invoices showing the old company address",
         "a timeout when importing files with empty lines"]

# ---------------------------------------------------------------------------------------------
# 3. Planted chunks for the six regressions (A hit, B miss)
# ---------------------------------------------------------------------------------------------
# R1 borealis: header dominates a short body. Adoption rule: 10-word body under a 24-word path.
R1_PATH = "Leave and Time Off > Parental leave > Eligibility, notice periods and documentation requirements for adoptive and foster parents"
R1_BODY = "Adoptive and foster parents: 14 weeks of paid leave per child."
R1_QUERY = "how much paid leave do we get when we adopt a child"
# ... and B ranks borealis' annual-leave chunk first, whose path shares "paid leave" with the query.
BOREALIS_PATHS = {"parental": "Leave and Time Off > Parental leave",
                  "vacation": "Leave and Time Off > Paid leave > How much paid leave you get",
                  "sick": "Leave and Time Off > Sick leave"}
BOREALIS_PARENTAL_0 = "Birth parents with at least {months} months of service receive {pweeks} weeks of fully paid parental leave. The rules for adoptive and foster parents follow below."
# R2 granite: misleading heading path. The parental-leave paragraph sits under Benefits > Retirement plan.
R2_BODY = "New parents receive 16 weeks of paid parental leave after the birth or adoption of a child and may start it up to two weeks before the due date. Agree the dates with your manager eight weeks ahead."
R2_QUERY = "how much paid time off do new parents get"
# R3 driftwood: the 2023 handbook is a near-copy of the 2024 one; the labeller marked only 2024.
R3_TOPIC, R3_ASK = "remote", 0
TWIN_EDITS = [("manager's", "line manager's"), ("your manager", "your line manager"), ("People Ops",
    "HR"),
              ("working days", "business days"), ("Workday", "the HR portal")]
# R4 acme: postfilter plan on the contracts filter returns only three ids, none of them gold.
R4_CPS, R4_TOPIC = "Keystone", "termination"
# R5 cobalt: header dominates a short body (card reader) vs. "Tap to pay" whose path matches the query.
R5_PATH = "Hardware > Card reader > Troubleshooting contactless, chip and magstripe read errors on firmware 3.x terminals"
R5_BODY = "Hold the card flat on the reader for two seconds and don't tap twice."
R5_QUERY = "customer's card keeps failing when they tap it"
COBALT_EXTRA = [
    ("tap", "Payments > Tap to pay > When a customer's card is declined", [
        "A decline comes from the card issuer, not from the terminal. Ask the customer to use "
        "another card or to contact their bank, and do not retry the same card more than twice.",
    ], [("terminal says declined, is it our reader or their bank", 0, "troubleshoot")]),
    ("printer", "Hardware > Receipt printer > Loading paper", [
        "Open the cover with the green lever and insert the roll so that the paper feeds from "
        "underneath, thermal side facing the print head. Receipts come out blank when the roll is "
        "upside down.",
    ], [("receipts are coming out blank", 0, "troubleshoot")]),
    ("eod", "Daily operations > End-of-day close", [
        "Run Close Day from the manager menu after the last sale. The terminal prints the Z report,"
        " uploads the day's transactions and resets the cash drawer count.",
    ], [("how do I close out the till at the end of the day", 0, "howto")]),
]
# R6 fjord: the answer is the last line of a long (near 512-token) chunk; prepending the header
# pushes it past e5's 512-token window, so B's embedding never sees it.
R6_PATH = "Configuration > fjord.yaml > Complete list of deployment settings, their defaults and allowed ranges"
R6_QUERY = "how long after a deploy can I still roll back without being asked to confirm"
R6_SETTINGS = [
    "project: the project slug shown in the dashboard and used in release names; required.",
    "region: deployment region, one of eu-north-1, eu-west-1 or us-east-1; default eu-north-1.",
    "runtime: container image family, for example node20, python3.12 or jvm21; required.",
    "build_command: shell command run in the build container before packaging; default none.",
    "build_timeout: minutes before a build is cancelled; default 20, maximum 90.",
    "artifact_retention: number of past release artifacts kept for redeploys; default 10.",
    "instances: number of instances started per environment; default 2, minimum 1.",
    "autoscale.min and autoscale.max: bounds for automatic scaling; scaling is off when both are "
    "equal.",
    "autoscale.cpu_target: average CPU utilisation, in percent, that triggers scaling; default 65.",
    "health_check.path: HTTP path polled to decide whether an instance is ready; default /healthz.",
    "health_check.interval: seconds between two health probes; default 10.",
    "health_check.failures: consecutive failed probes before an instance is replaced; default 3.",
    "deploy_strategy: rolling, blue_green or canary; default rolling.",
    "canary.percent: share of traffic sent to the new release during a canary; default 10.",
    "canary.duration: minutes a canary runs before it is promoted automatically; default 15.",
    "max_surge: extra instances allowed while a rolling deploy is in progress; default 1.",
    "drain_timeout: seconds an old instance keeps serving open connections after it leaves the load"
    " balancer; default 30.",
    "env_file: path of a dotenv file merged into the environment at deploy time; use secrets for "
    "credentials.",
    "secrets: list of secret names resolved from the vault at start-up; values are never written to"
    " logs.",
    "notify.slack: Slack channel that receives deploy started, succeeded and failed events.",
    "notify.email: list of addresses that receive a report for every failed deploy.",
    "maintenance_window: cron expression that limits when production deploys may start; default "
    "none.",
    "freeze: when true, production deploys are blocked unless an owner passes --force.",
    "logs.retention_days: days that application logs are kept; default 14, maximum 90.",
    "metrics.export: prometheus or otlp; default prometheus.",
    "ingress.domain: custom domain served by the environment; a TLS certificate is issued "
    "automatically.",
    "timeouts.request: seconds before the router ends an idle request; default 60.",
    "rollback_window: minutes after a deploy during which fjord rollback restores the previous "
    "release without a confirmation prompt; default 30, maximum 240.",
]
R6_BODY = ("Every key below can be set in fjord.yaml at the project root and overridden per "
           "environment "
           "under environments.<name>. Unknown keys are rejected by fjord validate, and values are "
           "checked again when a deploy starts. " + " ".join(R6_SETTINGS))

# ---------------------------------------------------------------------------------------------
# 4. Tenants: vocabulary and documents
# ---------------------------------------------------------------------------------------------
PROFILES = {
    "acme-legal": dict(company="Acme Legal LLP", product="Acme Client Portal", cur="$", people=
        "People Ops",
                       hr="BambooHR", expense="Expensify", travel="Navan", insurer="Aetna", pension=
                           "Fidelity NetBenefits",
                       pwm="1Password", itdesk="ext. 4400", docs=["handbook", "contracts", "tickets"], tickets=9,
                       contracts=[("Northwind Supply Ltd", "Northwind"), ("Lumen Data Services Inc.",
                           "Lumen"),
                                  ("Keystone Facilities Group", "Keystone")]),
    "borealis-health": dict(company="Borealis Health", product="Borealis Patient Portal", cur="$", people=
        "HR",
                            hr="Workday", expense="Concur", travel="Concur Travel", insurer="Cigna", pension=
                                "Vanguard",
                            pwm="Keeper", itdesk="ext. 2020", docs=["handbook", "product", "tickets"], tickets=10),
    "cobalt-retail": dict(company="Cobalt Retail Group", product="Cobalt POS", cur="£", people=
        "People Team",
                          hr="HiBob", expense="Pleo", travel="TravelPerk", insurer="Bupa", pension=
                              "Aviva",
                          pwm="1Password", itdesk="0161 555 0199", docs=["product", "tickets",
                              "handbook"], tickets=12,
                          product_title="Cobalt POS T400 User Guide"),
    "driftwood-logistics": dict(company="Driftwood Logistics", product="FleetTrack", cur="€", people=
        "People Ops",
                                hr="Workday", expense="SAP Concur", travel="Egencia", insurer=
                                    "Allianz Care",
                                pension="Allianz", pwm="Bitwarden", itdesk="+31 20 555 0140",
                                docs=["handbook", "product", "contracts", "tickets"], tickets=6,
                                contracts=[("Polar Freight Systems B.V.", "Polar Freight"), (
                                    "Meridian Fuel Cards", "Meridian")]),
    "evergreen-bank": dict(company="Evergreen Bank", product="Evergreen Business API", cur="$", people=
        "HR",
                           hr="Workday", expense="Emburse", travel="Amex GBT", insurer=
                               "UnitedHealthcare",
                           pension="Empower", pwm="CyberArk", itdesk=
                               "ext. 7000", docs=["handbook", "product", "contracts", "french",
                                   "tickets"], tickets=6,
                           product_title="Evergreen Business API Developer Guide",
                           contracts=[("Quanta Core Banking Ltd", "Quanta"), (
                               "Sable Card Processing", "Sable")]),
    "fjord-software": dict(company="Fjord Software AS", product="Fjord Deploy", cur="€", people=
        "People & Culture",
                           hr="Personio", expense="Pleo", travel="Perk", insurer="Storebrand", pension=
                               "Storebrand",
                           pwm="1Password", itdesk="#it-help", docs=["product", "german", "tickets",
                               "handbook"], tickets=10,
                           product_title="Fjord Deploy Reference"),
    "granite-insurance": dict(company="Granite Insurance", product="Granite Claims Hub", cur="$", people=
        "People Operations",
                              hr="UKG", expense="Expensify", travel="Navan", insurer=
                                  "Granite Health", pension="Principal",
                              pwm="LastPass", itdesk="ext. 3100", docs=["handbook", "contracts",
                                  "tickets"], tickets=8,
                              contracts=[("Atlas Reinsurance Brokers", "Atlas"), (
                                  "Vela Claims Software", "Vela")]),
    "harbor-clinic": dict(company="Harbor Clinic", product="Harbor Scheduler", cur="$", people=
        "the practice manager",
                          hr="Gusto", expense="Gusto", travel="Gusto", insurer="Kaiser Permanente", pension=
                              "Guideline",
                          pwm="Bitwarden", itdesk="ext. 11", docs=["handbook", "product"],
                          handbook_topics=["vacation", "sick", "remote", "health", "security"],
                          product_topics=["sso", "roles", "export", "notify", "retention"]),
}
PARAM_CHOICES = {
    "months": [3, 6], "pweeks": [12, 14, 16, 18], "pnotice": [4, 8], "vac": [22, 25, 26, 28, 30],
        "carry": [5, 10],
    "sickcert": ["third", "fourth"], "sick": [10, 15, 20], "start": ["09:00", "09:30", "10:00"],
        "remote": [2, 3],
    "claimdays": [30, 60, 90], "hshare": [80, 90, 100], "match": [3, 4, 5, 6], "vest": [2, 3],
        "pwlen": [12, 14, 16],
    "noticep": ["one month", "two months", "four weeks"], "exportcap": ["50,000", "100,000"], "bin": [14, 30],
    "retries": [5, 8, 10], "rate": [120, 300, 600], "errcode": [4012, 4107, 5203], "auditdays": [90, 180, 365],
    "release": ["2024.3", "7.2", "11.4"], "reviews": [("March", "September"), ("April", "October")],
}
MONEY = {"hoa": [300, 350, 400, 500], "perdiem": [45, 55, 60, 75], "lostcap": [25, 50], "giftcap": [50, 75, 100]}
CONTRACT_CHOICES = {
    "term": [12, 24, 36], "renew": [30, 60, 90], "cure": [15, 30], "latepay": [30, 45, 60], "net": [30, 45, 60],
    "interest": ["1", "1.5"], "capmonths": [12, 24], "confyears": [3, 5], "breachh": [24, 48, 72],
    "sla": ["99.5", "99.9", "99.95"], "insmillions": [1, 2, 5],
    "venue": [("England and Wales", "London"), ("the State of New York", "New York County"),
              ("the Netherlands", "Amsterdam"), ("Delaware", "Wilmington, Delaware")],
}


def tenant_params(rng: random.Random, prof: dict) -> dict:
    p = {k: v for k, v in prof.items() if isinstance(v, str)}
    for name in sorted(PARAM_CHOICES):
        p[name] = rng.choice(PARAM_CHOICES[name])
    p["rev1"], p["rev2"] = p.pop("reviews")
    for name in sorted(MONEY):
        p[name] = f"{prof['cur']}{rng.choice(MONEY[name])}"
    return p


class Corpus:
    """Chunks in generation order, plus what the generator knows about them (not written)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.topic: dict[str, str] = {}  # chunk_id -> topic key ("" for intros)

    def add(self, tenant, doc_id, source_type, title, path, text, topic) -> str:
        doc_rows = sum(1 for r in self.rows if r["doc_id"] == doc_id)
        cid = f"{doc_id}#{doc_rows + 1:03d}"
        header = f"{title} > {path}" if path else title
        self.rows.append(dict(chunk_id=cid, doc_id=doc_id, source_type=source_type, header=header,
                              text=text, tenant=tenant))
        self.topic[cid] = topic
        return cid


def add_topics(corpus, tenant, doc_id, stype, title, topics, params, lang, pool, paths=None, bodies=None):
    """Write each topic's bodies as chunks; each ask becomes a candidate query (gold = its body)."""
    for key, path, texts, asks in topics:
        path = (paths or {}).get(key, path)
        ids = []
        for i, t in enumerate(texts):
            t = (bodies or {}).get((key, i), t)
            ids.append(corpus.add(tenant, doc_id, stype, title, path, t.format(**params), key))
        for q, idx, qtype in asks:
            pool.append(dict(text=q.format(**params), golds=[ids[idx]], qtype=qtype, stype=stype,
                             lang=lang, key=(key, idx)))
    return ids


def build_tenant(rng: random.Random, tenant: str, corpus: Corpus) -> tuple[list[dict], dict]:
    prof = PROFILES[tenant]
    p = tenant_params(rng, prof)
    short = tenant.split("-")[0]
    pool: list[dict] = []
    planted: dict = {}
    for doc in prof["docs"]:
        if doc == "handbook":
            topics = [t for t in HANDBOOK if t[0] in prof.get("handbook_topics", [t[0] for t in HANDBOOK])]
            paths, bodies = {}, {}
            if tenant == "borealis-health":  # R1 set-up
                paths, bodies = BOREALIS_PATHS, {("parental", 0): BOREALIS_PARENTAL_0}
                topics = topics + [("adoption", R1_PATH, [R1_BODY], [])]
            if tenant == "granite-insurance":  # R2 set-up: no parental section, paragraph misfiled
                topics = [t for t in topics if t[0] != "parental"]
                topics = [(k, pa_, b + [R2_BODY] if k == "pension" else b, a) for k, pa_, b, a in topics]
            years = [2023, 2024] if tenant == "driftwood-logistics" else [2024]
            for year in years:
                title = f"{p['company']} Employee Handbook {year}"
                doc_id = f"{short}/handbook-{year}"
                corpus.add(tenant, doc_id, "handbook", title, "About this handbook",
                           f"This handbook applies to all employees of {p['company']} from January "
                           f"1, {year}, and "
                           "replaces earlier editions. Where a local employment contract or "
                           "collective agreement "
                           "grants more favourable terms, those terms apply.", "")
                yb = dict(bodies)
                if year == 2023:  # R3 set-up: same paragraphs, a couple of words edited
                    for key, _, texts, _ in topics:
                        for i, t in enumerate(texts):
                            for old, new in TWIN_EDITS:
                                t = t.replace(old, new)
                            yb[(key, i)] = t
                    sink: list[dict] = []  # the 2023 edition is not asked about directly
                    add_topics(corpus, tenant, doc_id, "handbook", title, topics, p, "en", sink, paths, yb)
                else:
                    add_topics(corpus, tenant, doc_id, "handbook", title, topics, p, "en", pool, paths, yb)
            hb = f"{short}/handbook-2024"
            if tenant == "borealis-health":
                planted["r1_gold"] = next(r["chunk_id"] for r in corpus.rows if r["text"] == R1_BODY)
            if tenant == "granite-insurance":
                planted["r2_gold"] = next(r["chunk_id"] for r in corpus.rows if r["text"] == R2_BODY)
            planted["handbook"] = hb
        elif doc in ("product", "german", "french"):
            if doc == "product":
                title = prof.get("product_title", f"{p['product']} Admin Guide")
                doc_id, lang = f"{short}/{'user-guide' if tenant == 'cobalt-retail' else 'docs'}", "en"
                topics = [t for t in PRODUCT if t[0] in prof.get("product_topics", [t[0] for t in PRODUCT])]
                if tenant == "cobalt-retail":  # R5 set-up
                    topics = COBALT_EXTRA + [("cardreader", R5_PATH, [R5_BODY], [])] + topics
                if tenant == "fjord-software":  # R6 set-up
                    topics = topics + [("settings", R6_PATH, [R6_BODY], [])]
            elif doc == "german":
                title, doc_id, lang, topics = "Fjord Deploy Benutzerhandbuch", f"{short}/handbuch-de", "de", GERMAN
            else:
                title, doc_id, lang, topics = "Evergreen Banque — Guide du client entreprise", f"{short}/guide-fr", "fr", FRENCH
            corpus.add(tenant, doc_id, "product_docs", title, "About this guide",
                       f"This guide covers {p['product']} release {p['release']} for workspace "
                       f"owners and admins. "
                       "Screens may differ slightly on older releases." if lang == "en" else
                       {"de": "Dieses Handbuch beschreibt Fjord Deploy ab Version 7. Ältere "
                              "Versionen können abweichen.",
                        "fr": "Ce guide s'adresse aux administrateurs des comptes entreprise "
                              "d'Evergreen Bank."}[lang], "")
            add_topics(corpus, tenant, doc_id, "product_docs", title, topics, p, lang, pool)
            if doc == "product" and tenant != SCAN_TENANT:  # distractors: release notes nobody asks about
                notes_id, notes = f"{short}/release-notes", f"{p['product']} Release Notes"
                major = rng.randint(3, 9)
                for minor in range(10):
                    ver, month = f"{major}.{minor}", ["January", "March", "May", "July", "September",
                        "November"][minor % 6]
                    when = f"{ver} ({month} {2023 + (minor + 2) // 6})"
                    corpus.add(tenant, notes_id, "release_notes", notes, f"{when} > New",
                               f"New in {ver}: " + "; ".join(rng.sample(FEATURES, 3)) +
                                   ". No action is needed to upgrade.", "")
                    corpus.add(tenant, notes_id, "release_notes", notes, f"{when} > Fixed",
                               f"Fixed in {ver}: " + "; ".join(rng.sample(FIXES, 2)) + ".", "")
        elif doc == "tickets":
            kinds = rng.sample(TICKETS, min(len(TICKETS), prof["tickets"] - 2))
            kinds = kinds + rng.sample(kinds, prof["tickets"] - len(kinds))  # repeats: multi-gold resolutions
            used: set[int] = set()
            by_kind: dict[str, list[str]] = {}
            for kind, title_, report, resolution, _ in kinds:
                num = rng.randint(40000, 69999)
                while num in used:
                    num = rng.randint(40000, 69999)
                used.add(num)
                doc_id, title = f"{short}/ticket-{num}", f"Ticket #{num} · {title_}"
                corpus.add(tenant, doc_id, "ticket", title, "Customer report", report.format(**p), kind)
                by_kind.setdefault(kind, []).append(
                    corpus.add(tenant, doc_id, "ticket", title, "Resolution", resolution.format(**p), kind))
                if rng.random() < 0.4:
                    corpus.add(tenant, doc_id, "ticket", title, "Follow-up",
                               "Customer confirmed the fix two days later. Closing the ticket; no "
                               "further action.", kind)
            for kind, *_, ask in TICKETS:
                if kind in by_kind:
                    pool.append(dict(text=ask, golds=by_kind[kind], qtype="troubleshoot", stype=
                        "ticket",
                                     lang="en", key=(kind, 1)))
        elif doc == "contracts":
            clause_ids: dict[str, list[str]] = {}
            for cp, cps in prof["contracts"]:
                c = {n: rng.choice(CONTRACT_CHOICES[n]) for n in sorted(CONTRACT_CHOICES)}
                c["law"], c["court"] = c.pop("venue")
                c["insamt"] = f"{p['cur']}{c.pop('insmillions')} million"
                cp_params = dict(p, cp=cp, cps=cps, **c)
                doc_id = f"{short}/msa-{cps.lower().replace(' ', '-')}"
                title = f"Master Services Agreement — {cp}"
                for key, section, subs, asks in CLAUSES:
                    ids = [corpus.add(tenant, doc_id, "contract", title, f"{section} > {h}", b.format(**cp_params), key)
                           for h, b in subs]
                    clause_ids.setdefault(key, []).append(ids[0])
                    for q, idx, qtype in asks:
                        pool.append(dict(text=q.format(**cp_params), golds=[ids[idx]], qtype=qtype,
                                         stype="contract", lang="en", key=(key, idx), cps=cps))
            for q, key, _ in CLAUSE_ASKS_ANY:
                pool.append(dict(text=q, golds=list(clause_ids[key]), qtype="lookup", stype=
                    "contract",
                                 lang="en", key=(key, 0)))
    return pool, planted


# ---------------------------------------------------------------------------------------------
# 5. Queries: pick each tenant's queries (the planted ones first), assign the paired cells
# ---------------------------------------------------------------------------------------------
def pick_queries(rng, tenant, pool, planted, corpus) -> list[dict]:
    seen, uniq = set(), []
    for c in pool:
        if c["text"] not in seen:
            seen.add(c["text"])
            uniq.append(c)
    twin_of = {}
    if tenant == "driftwood-logistics":  # the 2023 twin of each 2024 chunk: same topic, same position
        rows = corpus.rows
        old = [r["chunk_id"] for r in rows if r["doc_id"] == "driftwood/handbook-2023"]
        new = [r["chunk_id"] for r in rows if r["doc_id"] == "driftwood/handbook-2024"]
        twin_of = dict(zip(new, old, strict=True))
    special: list[dict] = []
    if tenant == "borealis-health":
        special.append(dict(text=R1_QUERY, golds=[planted["r1_gold"]], qtype="policy", stype=
            "handbook",
                            lang="en", kind="header_dominates_short_body"))
    if tenant == "granite-insurance":
        special.append(dict(text=R2_QUERY, golds=[planted["r2_gold"]], qtype="policy", stype=
            "handbook",
                            lang="en", kind="misleading_heading_path"))
    if tenant == "cobalt-retail":
        gold = next(r["chunk_id"] for r in corpus.rows if r["text"] == R5_BODY)
        special.append(dict(text=R5_QUERY, golds=[gold], qtype="troubleshoot", stype="product_docs",
                            lang="en", kind="header_dominates_short_body"))
    if tenant == "fjord-software":
        gold = next(r["chunk_id"] for r in corpus.rows if r["text"] == R6_BODY)
        special.append(dict(text=R6_QUERY, golds=[gold], qtype="lookup", stype="product_docs",
                            lang="en", kind="header_pushes_long_body_past_window"))
    for c in uniq:
        if tenant == "driftwood-logistics" and c["key"] == (R3_TOPIC, R3_ASK) and c["stype"] == "handbook":
            special.append(dict(c, kind="unlabelled_near_duplicate", twin=twin_of[c["golds"][0]]))
        if tenant == "acme-legal" and c["key"] == (R4_TOPIC, 0) and c.get("cps") == R4_CPS:
            special.append(dict(c, kind="postfilter_short_list", filter_types=["contract"]))
    special_texts = {s["text"] for s in special}
    rest = [c for c in uniq if c["text"] not in special_texts]
    forced = [c for c in rest if c["lang"] != "en"]  # every German / French ask is used
    others = [c for c in rest if c["lang"] == "en"]
    n = sum(PLAN[tenant])
    chosen = special + forced + rng.sample(others, n - len(special) - len(forced))
    # Twins: every other 2024 handbook gold in driftwood also has its 2023 copy as gold (rel 1).
    for c in chosen:
        if twin_of and "kind" not in c and c["stype"] == "handbook":
            c["golds"] = c["golds"] + [twin_of[c["golds"][0]]]
    # Paired cells: planted regressions are the tenant's a_hit_b_miss; the rest are shuffled.
    bh, bm, mh, hm = PLAN[tenant]
    assert hm == len(special), (tenant, hm, len(special))
    cells = ["both_hit"] * bh + ["both_miss"] * bm + ["a_miss_b_hit"] * mh
    rng.shuffle(cells)
    for c in special:
        c["cell"] = "a_hit_b_miss"
    for c, cell in zip(chosen[len(special):], cells, strict=True):
        c["cell"] = cell
    for c in chosen:
        c["tenant"] = tenant
    return chosen


def choose_filter(rng, q, tenant_types) -> None:
    """Filters: the scan tenant always; the R4 query; ~18% of the non-planted others (by source type)."""
    if q["tenant"] == SCAN_TENANT:
        q["filter_types"] = None
        q["filter"] = f"tenant = '{SCAN_TENANT}'"
        return
    if "filter_types" not in q:
        if rng.random() >= 0.18 or q.get("kind"):  # planted header cases are unfiltered
            q["filter"] = None
            return
        others = [t for t in tenant_types if t != q["stype"]]
        q["filter_types"] = [q["stype"]] if rng.random() < 0.6 or not others else sorted([q["stype"], rng.choice(others)])
    ft = q["filter_types"]
    pred = f"source_type = '{ft[0]}'" if len(ft) == 1 else "source_type IN (" + ", ".join(f"'{t}'" for t in ft) + ")"
    q["filter"] = f"tenant = '{q['tenant']}' AND {pred}"


# ---------------------------------------------------------------------------------------------
# 6. Runs: ranked lists with gold placed where the cell says, distractors everywhere else
# ---------------------------------------------------------------------------------------------
STOP = set("a an the i we my our me you your they their it its do does did get how much many what "
           "when "
           "where which who can is are to of for in on at if and or be after before with still "
           "keeps s t "
           "don this that from by as so up off out about need have has will would long time".split())


def stems(s: str) -> set[str]:
    """Crude stems (first five letters) of the content words: 'parents' and 'parental' meet."""
    return {w[:5] for w in re.findall(r"[^\W_]+", s.lower()) if w not in STOP and len(w) > 2}


HIT_RANKS, HIT_WEIGHTS = [1, 2, 3, 4, 5], [45, 22, 14, 10, 9]


def place(rng, golds, hit, depth, can_drop, taken):
    """Ranks for gold ids in one arm: primary gold at 1..5 on a hit; on a miss at 6..depth or absent."""
    ranks: dict[str, int | None] = {}
    free = lambda lo: [r for r in range(lo, depth + 1) if r not in taken and r not in ranks.values()]  # noqa: E731
    for i, g in enumerate(golds):
        if hit and i == 0:
            opts = [r for r in free(1) if r <= min(K, depth)]
            r = rng.choices(opts, weights=[HIT_WEIGHTS[HIT_RANKS.index(o)] for o in opts])[0]
        elif (not can_drop or rng.random() < 0.6) and free(1 if hit else K + 1):
            r = rng.choice(free(1 if hit else K + 1))
        else:
            r = None
        ranks[g] = r
    return ranks


def ranked(rng, forced: dict, distractors: list[str], depth: int) -> list[str]:
    slots: list[str | None] = [None] * depth
    for cid, r in forced.items():
        if r is not None:
            slots[r - 1] = cid
    fill = iter([d for d in distractors if d not in forced])
    return [s if s is not None else next(fill) for s in slots]


def scores_for(rng, n, top_lo) -> list[float]:
    s, out = rng.randint(top_lo, top_lo + 900), []  # in units of 1e-4: strictly descending
    for _ in range(n):
        out.append(s / 10000)
        s -= rng.randint(6, 140)
    return out


def simulate(rng, queries, corpus) -> dict[str, list[dict]]:
    rows = corpus.rows
    by_id = {r["chunk_id"]: r for r in rows}
    runs = {"a": [], "b": []}
    for q in queries:
        eligible = [r["chunk_id"] for r in rows if r["tenant"] == q["tenant"]
                    and (q.get("filter_types") is None or r["source_type"] in q["filter_types"])]
        q["n_eligible"] = len(eligible) if q["filter"] else None
        golds, g0 = q["golds"], by_id[q["golds"][0]]
        gold_set = set(golds)
        # Distractors are ordered like a weak retriever would: shared word stems with the query
        # (A sees the body, B the heading path + body), a pull towards the gold's topic and
        # document, and noise. The cell decides where gold goes; this decides what fills the rest.
        qs = stems(q["text"])
        affinity = {}
        for cid in eligible:
            if cid in gold_set:
                continue
            r = by_id[cid]
            same_topic = bool(corpus.topic[cid]) and corpus.topic[cid] == corpus.topic[g0["chunk_id"]]
            affinity[cid] = 2.0 * same_topic + 0.7 * (r[
                "doc_id"] == g0["doc_id"]) + 0.3 * (r["source_type"] == g0["source_type"])
        a_hit = q["cell"] in ("both_hit", "a_hit_b_miss")
        b_hit = q["cell"] in ("both_hit", "a_miss_b_hit")
        for arm, hit in (("a", a_hit), ("b", b_hit)):
            seen_text = (lambda r: r["text"]) if arm == "a" else (lambda r: r["header"] + " " + r[
                "text"])
            key = {cid: a + 1.5 * len(qs & stems(seen_text(by_id[cid]))) + rng.gauss(0, 1.0) for cid, a in affinity.items()}
            distract = sorted(key, key=lambda cid: (-key[cid], cid))
            if q["filter"] is None:
                plan, depth = "ann", DEPTH
            elif len(eligible) <= SCAN_MAX[arm]:
                plan, depth = "scan", min(DEPTH, len(eligible))
            else:
                plan = "postfilter"
                depth = DEPTH if len(eligible) > 64 else rng.randint(6, DEPTH)
            forced: dict[str, int | None] = {}
            kind = q.get("kind")
            if kind and arm == "a":
                forced = {golds[0]: {"unlabelled_near_duplicate": 1, "postfilter_short_list": 2,
                                     "misleading_heading_path": 2,
                                         "header_pushes_long_body_past_window": 3}.get(kind, 1)}
                if kind == "unlabelled_near_duplicate":
                    forced[q["twin"]] = 3
            elif kind == "header_dominates_short_body":  # B: a chunk whose path echoes the query is first
                rival = next(r["chunk_id"] for r in rows if r["tenant"] == q["tenant"] and (
                    r["header"].endswith("How much paid leave you get") or r["header"].endswith(
                        "card is declined")))
                forced = {rival: 1, golds[0]: 9 if q["tenant"] == "borealis-health" else 8}
            elif kind == "misleading_heading_path":
                forced = {golds[0]: 14}
            elif kind == "unlabelled_near_duplicate":
                forced = {q["twin"]: 1, golds[0]: 7}
            elif kind == "postfilter_short_list":
                plan, depth, forced = "postfilter", 3, {golds[0]: None}
            elif kind == "header_pushes_long_body_past_window":
                forced = {golds[0]: None}
            if not forced:
                can_drop = len(distract) >= depth
                forced = place(rng, golds, hit, depth, can_drop, set())
            for g in golds:  # golds not placed by a planted case stay out of the list
                forced.setdefault(g, None)
            ids = ranked(rng, forced, distract, depth)
            n = len(eligible)
            lat = {"ann": rng.uniform(7, 22), "postfilter": rng.uniform(18, 48), "scan": 3 + n * rng.uniform(0.5, 0.9)}[plan]
            runs[arm].append(dict(query_id=q["query_id"], retrieved=ids,
                                  scores=scores_for(rng, len(ids), 7600 if arm == "a" else 7900),
                                  plan=plan, n_eligible=q["n_eligible"], n_returned=len(ids),
                                  latency_ms=round(lat, 1)))
    return runs


# ---------------------------------------------------------------------------------------------
# 7. Writing
# ---------------------------------------------------------------------------------------------
def write(table: pa.Table, path: pathlib.Path, meta: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    pq.write_table(table, path, compression="zstd")


MANIFEST = """\
# The bundled sample evaluation: arm A embeds chunk bodies, arm B prepends the heading path.
# No k here: both runs record k = 5 in their metadata.
[labels]
path = "labels.parquet"

[corpus]
path = "chunks.parquet"

[queries]
path = "queries.parquet"

[arms.a]
name = "plain"
path = "runs/plain.parquet"

[arms.b]
name = "{b_name}"
path = "runs/{b_file}.parquet"
"""


def build(out_dir: pathlib.Path) -> None:
    out_dir = pathlib.Path(out_dir)
    rng = random.Random(SEED)
    corpus = Corpus()
    queries: list[dict] = []
    for tenant in PLAN:  # dict order: fixed
        pool, planted = build_tenant(rng, tenant, corpus)
        queries += pick_queries(rng, tenant, pool, planted, corpus)
    types = {t: sorted({r["source_type"] for r in corpus.rows if r["tenant"] == t}) for t in PLAN}
    for q in queries:
        choose_filter(rng, q, types[q["tenant"]])
    rng.shuffle(queries)
    for i, q in enumerate(queries, 1):
        q["query_id"] = f"q{i:03d}"
    queries.sort(key=lambda q: q["query_id"])
    runs = simulate(rng, queries, corpus)
    n_corpus = len(corpus.rows)

    cols = ["chunk_id", "doc_id", "source_type", "header", "text", "tenant"]
    write(pa.table({c: pa.array([r[c] for r in corpus.rows], pa.string()) for c in cols}),
          out_dir / "chunks.parquet", {"name": "sample corpus", "corpus_snapshot": META_COMMON[
              "corpus_snapshot"]})
    write(pa.table({
        "query_id": pa.array([q["query_id"] for q in queries], pa.string()),
        "text": pa.array([q["text"] for q in queries], pa.string()),
        "tenant": pa.array([q["tenant"] for q in queries], pa.string()),
        "query_type": pa.array([q["qtype"] for q in queries], pa.string()),
        "source_type": pa.array([q["stype"] for q in queries], pa.string()),
        "filter": pa.array([q["filter"] for q in queries], pa.string()),
        "selectivity": pa.array([None if q["n_eligible"] is None else round(q["n_eligible"] / n_corpus, 5)
                                 for q in queries], pa.float64()),
        "language": pa.array([q["lang"] for q in queries], pa.string()),
    }), out_dir / "queries.parquet", {"name": "sample queries"})
    lab = []  # relevance: 2 marks the best gold of a multi-gold query (and ~35% of single golds)
    for q in queries:
        gs = q["golds"]
        if len(gs) == 1:
            rels = [2 if rng.random() < 0.35 else 1]
        elif q["stype"] == "contract":  # every supplier's clause answers equally well
            rels = [1] * len(gs)
        else:
            rels = [2] + [1] * (len(gs) - 1)
        lab += [(q["query_id"], g, r) for g, r in sorted(zip(gs, rels, strict=True))]
    write(pa.table({"query_id": pa.array([x[0] for x in lab], pa.string()),
                    "chunk_id": pa.array([x[1] for x in lab], pa.string()),
                    "relevance": pa.array([x[2] for x in lab], pa.int32())}),
          out_dir / "labels.parquet", {"name": "sample gold v1", "created_at": LABELS_CREATED})
    labels_sha = hashlib.sha256((out_dir / "labels.parquet").read_bytes()).hexdigest()
    for stem, (arm, name, k, created, mode) in RUNS.items():
        rows = runs[arm]
        write(pa.table({
            "query_id": pa.array([r["query_id"] for r in rows], pa.string()),
            "retrieved": pa.array([r["retrieved"] for r in rows], pa.list_(pa.string())),
            "scores": pa.array([r["scores"] for r in rows], pa.list_(pa.float64())),
            "plan": pa.array([r["plan"] for r in rows], pa.string()),
            "n_eligible": pa.array([r["n_eligible"] for r in rows], pa.int64()),
            "n_returned": pa.array([r["n_returned"] for r in rows], pa.int64()),
            "latency_ms": pa.array([r["latency_ms"] for r in rows], pa.float64()),
        }), out_dir / "runs" / f"{stem}.parquet",
            dict(name=name, k=str(k), **META_COMMON, labels_sha256=labels_sha, created_at=created, header_mode=mode))
    (out_dir / "triage.toml").write_text(MANIFEST.format(b_name="headers", b_file="headers"), encoding=
        "utf-8")
    (out_dir / "k10.toml").write_text(
        MANIFEST.format(b_name="headers-k10", b_file="headers_k10").replace(
            "No k here: both runs record k = 5", "Arm b records k = 10, arm a k = 5: the k-mismatch"
                                                 " check"),
        encoding="utf-8")
    verify(out_dir, {q["query_id"]: q["kind"] for q in queries if q.get("kind")})


# ---------------------------------------------------------------------------------------------
# 8. Verification: read the files back and recompute the story in plain Python
# ---------------------------------------------------------------------------------------------

def words(s: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", s.lower())) - STOP


def est_tokens(s: str) -> int:  # rough subword count for English: 4 tokens per 3 words
    return math.ceil(len(s.split()) * 4 / 3)


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise AssertionError(f"sample story broken: {msg}")


def verify(out_dir: pathlib.Path, planted: dict[str, str]) -> dict:
    read = lambda p: pq.read_table(out_dir / p)  # noqa: E731
    chunks = {r["chunk_id"]: r for r in read("chunks.parquet").to_pylist()}
    queries = {r["query_id"]: r for r in read("queries.parquet").to_pylist()}
    gold: dict[str, dict[str, int]] = {}
    for r in read("labels.parquet").to_pylist():
        check(r["relevance"] >= 1 and r["chunk_id"] in chunks, f"label row {r}")
        gold.setdefault(r["query_id"], {})[r["chunk_id"]] = r["relevance"]
    metas, runs = {}, {}
    for stem in RUNS:
        t = read(f"runs/{stem}.parquet")
        metas[stem] = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
        runs[stem] = {r["query_id"]: r for r in t.to_pylist()}
    lab_meta = {k.decode(): v.decode() for k, v in read("labels.parquet").schema.metadata.items()}
    sha = hashlib.sha256((out_dir / "labels.parquet").read_bytes()).hexdigest()
    n = len(queries)
    check(sorted(queries) == [f"q{i:03d}" for i in range(1, 201)], "query ids q001..q200")
    check(600 <= len(chunks) <= 1500, f"corpus size {len(chunks)}")
    check(set(gold) == set(queries), "every query labelled")
    check(any(len(g) == 2 for g in gold.values()) and any(len(g) == 3 for g in gold.values()),
        "multi-gold")
    check(metas["plain"]["k"] == "5" == metas["headers"]["k"] and metas["headers_k10"]["k"] == "10",
        "k metadata")
    for stem, m in metas.items():
        check(m["labels_sha256"] == sha, f"{stem} labels_sha256")
        check(all(m[key] == v for key, v in META_COMMON.items()), f"{stem} held-still metadata")
    check(lab_meta["created_at"] < metas["plain"]["created_at"] < metas["headers"]["created_at"],
        "created_at order")
    for stem, run in runs.items():
        check(sorted(run) == sorted(queries), f"{stem} query set")
        for qid, r in run.items():
            ids, sc, q = r["retrieved"], r["scores"], queries[qid]
            check(len(ids) == len(set(ids)) == len(sc) == r["n_returned"],
                f"{stem} {qid} lengths / duplicates")
            check(all(x > y for x, y in zip(sc, sc[1:])),
                f"{stem} {qid} scores not strictly descending")
            check(all(i in chunks and chunks[i]["tenant"] == q["tenant"] for i in ids),
                f"{stem} {qid} ids")
            if q["filter"] is None:
                check(r["plan"] == "ann" and r["n_eligible"] is None and q["selectivity"] is None,
                    f"{qid} unfiltered")
            else:  # the filter string, evaluated against the corpus, gives n_eligible and selectivity
                tenant = re.search(r"tenant = '([^']+)'", q["filter"]).group(1)
                types = re.findall(r"'([a-z_]+)'", q["filter"].split("source_type", 1)[1]) if "source_type" in q[
                    "filter"] else None
                ok = [c for c in chunks.values() if c["tenant"] == tenant and (types is None or c[
                    "source_type"] in types)]
                okset = {c["chunk_id"] for c in ok}
                check(r["n_eligible"] == len(ok) and abs(q["selectivity"] - len(ok) / len(chunks)) < 1e-5,
                    f"{qid} n_eligible")
                check(r["plan"] in ("scan", "postfilter") and set(ids) <= okset,
                    f"{stem} {qid} filter respected")
                check(r["plan"] != "scan" or len(ids) == min(DEPTH, len(ok)),
                    f"{stem} {qid} scan depth")

    def hit(stem, qid, g=None):
        return bool(set(runs[stem][qid]["retrieved"][:K]) & set(g or gold[qid]))

    def rank(stem, qid, g=None):
        ids = runs[stem][qid]["retrieved"]
        return min((ids.index(x) + 1 for x in (g or gold[qid]) if x in ids), default=None)

    def cells(g_of=lambda q: None):
        out = dict.fromkeys(CELL_NAMES, 0)
        for qid in queries:
            a, b = hit("plain", qid, g_of(qid)), hit("headers", qid, g_of(qid))
            out[CELL_NAMES[(0 if a and b else 1 if not a and not b else 2 if b else 3)]] += 1
        return out

    c = cells()
    check(list(c.values()) == [118, 36, 40, 6], f"paired cells {c}")
    check(sum(hit("plain", q) for q in queries) == 124 and sum(hit("headers", q) for q in queries) == 158,
        "hit rates")
    misses = [(s, q) for s in ("plain", "headers") for q in queries if not hit(s, q)]
    check(sum(rank(s, q) is None for s, q in misses) >= 10 and sum(rank(s, q) is not None for s, q in misses) >= 10,
          "misses: some gold at 6-20, some absent")
    regress = sorted(q for q in queries if hit("plain", q) and not hit("headers", q))
    check(regress == sorted(planted), f"regressions {regress} != planted {sorted(planted)}")
    found = {}
    for qid in regress:
        kind, q, b = planted[qid], queries[qid], runs["headers"][qid]
        g = chunks[max(gold[qid], key=lambda x: (gold[qid][x], x))]
        qw = words(q["text"])
        if kind == "header_dominates_short_body":
            body_n, head_n = len(g["text"].split()), len(g["header"].split())
            rival = [chunks[i] for i in b["retrieved"][:K]
                     if len(words(chunks[i]["header"]) & qw) >= max(2, len(words(g["header"]) & qw) + 1)]
            check(body_n < 15 and head_n > body_n and rival and (rank("headers", qid) or 99) > K,
                f"{qid} {kind}")
        elif kind == "misleading_heading_path":
            same_head = [c for c in chunks.values() if c["header"] == g["header"] and c["chunk_id"] != g[
                "chunk_id"]]
            check(not (words(g["header"]) & qw) and len(words(g["text"]) & qw) >= 2 and same_head
                  and all(not (words(c["text"]) & qw) for c in same_head) and (rank("headers", qid) or 99) > K,
                      f"{qid} {kind}")
        elif kind == "unlabelled_near_duplicate":
            sim = lambda x, y: difflib.SequenceMatcher(None, x.split(), y.split()).ratio()  # noqa: E731
            dups = [i for i in b["retrieved"][:K] if i not in gold[qid] and chunks[i]["doc_id"] != g[
                "doc_id"]
                    and sim(chunks[i]["text"], g["text"]) >= 0.9]
            check(len(dups) == 1 and 6 <= (rank("headers", qid) or 0) <= DEPTH, f"{qid} {kind}")
            found[qid] = (g["chunk_id"], dups[0])
            amended = cells(lambda x: list(gold[x]) + [dups[0]] if x == qid else None)
            check(list(amended.values()) == [119, 36, 40, 5],
                f"amending {dups[0]} does not resolve {qid}: {amended}")
        elif kind == "postfilter_short_list":
            a = runs["plain"][qid]
            check(b["plan"] == "postfilter" and b["n_returned"] < K and b["n_eligible"] <= 60 and rank(
                "headers", qid) is None
                  and a["plan"] in ("ann", "scan"), f"{qid} {kind}")
        elif kind == "header_pushes_long_body_past_window":
            body = g["text"].split()
            at = next(i for i, w in enumerate(body) if w.startswith("rollback_window"))
            check(est_tokens(g["text"]) <= 512 < est_tokens(g["header"] + "\n\n" + g["text"])
                  and at >= 0.9 * len(body) and rank("headers", qid) is None, f"{qid} {kind}")
        else:
            check(False, f"unknown kind {kind}")
    rates = {}
    for qid, q in queries.items():
        t = rates.setdefault(q["tenant"], [0, 0, 0])
        t[0] += 1
        t[1] += hit("plain", qid)
        t[2] += hit("headers", qid)
    check(7 <= len(rates) <= 9 and sum(b / m < 0.80 for m, _, b in rates.values()) == 3,
        f"tenant rates {rates}")
    scan_t = [t for t in rates if all(runs[s][q]["plan"] == "scan" for s in RUNS for q in queries
                                      if queries[q]["tenant"] == t)]
    check(scan_t == [SCAN_TENANT] and 4 <= rates[SCAN_TENANT][0] <= 8, f"scan tenant {scan_t}")
    check(sum(q["language"] != "en" for q in queries.values()) >= 3, "languages")
    return {"rates": rates, "near_duplicate": found, "regressions": {q: planted[q] for q in regress},
            "corpus": len(chunks), "cells": c}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent,
                    help="folder to write into (default: the folder of this script)")
    args = ap.parse_args()
    build(args.out)
    print(f"wrote sample evaluation to {args.out}")


if __name__ == "__main__":
    main()
