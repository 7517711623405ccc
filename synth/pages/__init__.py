"""What the two HTML reports share: the page skeleton and its style, banners, tables, the ledger, pictures.
Reads only what it is handed (a Description's ledger, numbers, figures), never a table.
Hands on HTML pieces and PNG images to the evaluation's and the inspector's reports.
"""
